/**
 * `slidingLog` of src/adapters/memory-limiter/sliding-window.ts, step by step in Lua, so one
 * EVALSHA reads, decides and writes a key atomically (Redis runs one script at a time). The log
 * is a sorted set of admitted request times; the window is round(burst / sustained * 1000) ms.
 * Time comes from ARGV (the caller's `nowMs`), never from the Redis clock, so tests can move
 * time and every instance decides from the clock it passes.
 *
 * KEYS[1] = the log; ARGV = burst, sustainedPerSecond, nowMs.
 * Returns { allowed (0/1), remaining, resetAt (s), retryAfterSeconds } as strings: Redis
 * truncates Lua numbers in replies, and Lua 5.1's tostring switches to exponents at 1e14.
 */
export const SLIDING_LOG_LUA = `
local key = KEYS[1]
local burst = tonumber(ARGV[1])
local sustained = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local function int(x) return string.format('%.0f', x) end

local windowMs = math.floor(burst / sustained * 1000 + 0.5)
-- Hits at or before now - W have left the window (now - W, now].
redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now - windowMs))
local count = redis.call('ZCARD', key)
local allowed = count < burst
if allowed then
  -- Members must be unique: requests in the same millisecond are numbered. Entries sharing a
  -- score always leave together, so the count of that score is a fresh suffix.
  local same = redis.call('ZCOUNT', key, int(now), int(now))
  redis.call('ZADD', key, int(now), int(now) .. ':' .. same)
  count = count + 1
end
-- Two windows, as for every limiter key; after one the log is empty anyway.
redis.call('PEXPIRE', key, int(2 * windowMs))

local oldest = now
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
-- The moment the oldest counted request leaves the window and frees a slot.
local freesAt = oldest + windowMs
local retry = 0
if not allowed then retry = math.max(1, math.ceil((freesAt - now) / 1000)) end
return { allowed and 1 or 0, int(math.max(0, burst - count)), int(math.ceil(freesAt / 1000)), int(retry) }
`;
