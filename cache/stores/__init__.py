"""Cache stores behind one async interface: `memory.MemoryStore` (embedded default), `redis.RedisStore`."""
