"""Traffic traces: a JSONL format, a seeded synthesiser, extraction from the gateway's request
log, and a replayer that measures TTFT / TTLT / end-to-end latency against any OpenAI endpoint.

    format    TraceRecord, read_trace / write_trace, size classes
    synth     `switchyard trace synth`
    extract   `switchyard trace extract`
    replay    `switchyard replay`
"""
