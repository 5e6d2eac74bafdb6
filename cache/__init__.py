"""The cache: encoder, exact and semantic layers, near-miss guard, stores, admin API.

Entry point: `cache.service.CacheService` (see docs/cache.md). Submodules are imported on use so that
`import cache` stays cheap (no torch, onnxruntime or faiss at import time).
"""
