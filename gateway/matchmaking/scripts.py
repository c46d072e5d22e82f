"""Matchmaking's Lua scripts: every change to a queue is one of these, each
touching only keys of one queue (its ``{mm:<queue>}`` hash tag), so each is
atomic on a Redis Cluster too. See ``queues.py`` for the keys and the
guarantees they give."""

# Answers as STATUS does, so that the reply needs no read of its own.
# KEYS: ticket, waiting, alive, waits. ARGV: id, doc, members, state, now,
# alive until, party code, user.
CREATE = """
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'members', ARGV[3], 'state', ARGV[4])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'party_code', ARGV[7]) end
if ARGV[4] == 'waiting' then
  redis.call('HSET', KEYS[1], 'enqueued_at', ARGV[5])
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
end
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1] .. '|' .. ARGV[8])
local rank = redis.call('ZRANK', KEYS[2], ARGV[1]) or -1
local waits = redis.call('LRANGE', KEYS[4], 0, -1)
return {redis.call('HGETALL', KEYS[1]), rank, redis.call('ZCARD', KEYS[2]), waits}
"""

# The friend joins a party that still waits for one. KEYS: ticket, waiting,
# alive. ARGV: id, members, now, alive until, user.
JOIN = """
if redis.call('HGET', KEYS[1], 'state') ~= 'party_open' then return 0 end
redis.call('HSET', KEYS[1], 'members', ARGV[2], 'state', 'waiting', 'enqueued_at', ARGV[3])
redis.call('HDEL', KEYS[1], 'party_code')
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1] .. '|' .. ARGV[5])
return 1
"""

# The ticket with its queue position, refreshing the caller's heartbeat if
# asked (XX: only a live ticket's entry; GT: never shortened). KEYS: ticket,
# waiting, alive, waits. ARGV: id, user, alive until ('' = no refresh).
STATUS = """
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return {} end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[3], 'XX', 'GT', ARGV[3], ARGV[1] .. '|' .. ARGV[2])
end
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
return {fields, rank or -1, redis.call('ZCARD', KEYS[2]), redis.call('LRANGE', KEYS[4], 0, -1)}
"""

# Cancel or drop a live ticket that no table has taken; a drop only if some
# member's heartbeat has really run out (a refresh may have come in since the
# matcher looked). Returns 'closed', 'alive', or the state it was in.
# KEYS: ticket, waiting, alive. ARGV: id, new state, now, keep ms, drop?, reason.
CLOSE = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'waiting' and state ~= 'party_open' then return state or '' end
local members = cjson.decode(redis.call('HGET', KEYS[1], 'members'))
if ARGV[5] == '1' then
  local dead = false
  for _, m in ipairs(members) do
    local until_ = redis.call('ZSCORE', KEYS[3], ARGV[1] .. '|' .. m.user_id)
    if (not until_) or tonumber(until_) < tonumber(ARGV[3]) then dead = true end
  end
  if not dead then return 'alive' end
end
redis.call('ZREM', KEYS[2], ARGV[1])
for _, m in ipairs(members) do redis.call('ZREM', KEYS[3], ARGV[1] .. '|' .. m.user_id) end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'closed_at', ARGV[3], 'reason', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 'closed'
"""

# Tables taken, each all or nothing: a table's tickets all still waiting with
# every member alive, or that table changes nothing (the others are judged
# on their own, after the tables before them in the call). KEYS: waiting,
# alive, forming, plans, ticket 1..n. ARGV: now, claim until, then per
# table: table id, plan, CPU seats (JSON list, the same for every ticket:
# bot fill), its ticket count c, then c times (the ticket's KEYS index,
# ticket id, seats). Returns one 1 (taken) or 0 per table, in order.
TAKE = """
local now = tonumber(ARGV[1])
local taken = {}
local i = 3
while i <= #ARGV do
  local table_id, plan, cpu, count = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  local first = i + 4
  local ok = true
  for j = 0, count - 1 do
    local k, id = tonumber(ARGV[first + 3 * j]), ARGV[first + 3 * j + 1]
    if redis.call('HGET', KEYS[k], 'state') ~= 'waiting' or not redis.call('ZSCORE', KEYS[1], id) then
      ok = false
      break
    end
    for _, m in ipairs(cjson.decode(redis.call('HGET', KEYS[k], 'members'))) do
      local until_ = redis.call('ZSCORE', KEYS[2], id .. '|' .. m.user_id)
      if (not until_) or tonumber(until_) < now then ok = false end
    end
    if not ok then break end
  end
  if ok then
    for j = 0, count - 1 do
      local k, id, seats = tonumber(ARGV[first + 3 * j]), ARGV[first + 3 * j + 1], ARGV[first + 3 * j + 2]
      redis.call('ZREM', KEYS[1], id)
      for _, m in ipairs(cjson.decode(redis.call('HGET', KEYS[k], 'members'))) do
        redis.call('ZREM', KEYS[2], id .. '|' .. m.user_id)
      end
      redis.call('HSET', KEYS[k], 'state', 'forming', 'table', table_id, 'seats', seats, 'cpu_seats', cpu)
    end
    redis.call('ZADD', KEYS[3], ARGV[2], table_id)
    redis.call('HSET', KEYS[4], table_id, plan)
  end
  taken[#taken + 1] = ok and 1 or 0
  i = first + 3 * count
end
return taken
"""

# Take over a formation whose owner's claim ran out. KEYS: forming, plans.
# ARGV: table id, now, claim until. Returns the plan, or nil.
CLAIM = """
local until_ = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not until_) or tonumber(until_) >= tonumber(ARGV[2]) then return false end
local plan = redis.call('HGET', KEYS[2], ARGV[1])
if not plan then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return false
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return plan
"""

# Close a formation once, and tell the followers (the notice published here,
# by the one call that closed it: a round trip saved, and a notice never
# published for a formation that another replica closed). KEYS: forming,
# plans, waits, ticket 1..n. ARGV: table id, state, now, keep ms, reason,
# waits to keep, notices channel, notice ('' = none), wait 1..m.
FINISH = """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
for k = 4, #KEYS do
  redis.call('HSET', KEYS[k], 'state', ARGV[2], 'closed_at', ARGV[3], 'reason', ARGV[5])
  redis.call('PEXPIRE', KEYS[k], ARGV[4])
end
for i = 9, #ARGV do redis.call('LPUSH', KEYS[3], ARGV[i]) end
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[6]) - 1)
if ARGV[8] ~= '' then redis.call('PUBLISH', ARGV[7], ARGV[8]) end
return 1
"""

# Compare and set: the player lock and the lease. ARGV: expected ('' =
# absent), new ('' = delete), expiry in ms (0 = none, which also clears one).
SWAP = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
elseif tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1
"""

# KEYS: queues, specs. ARGV: queue hash, spec, now.
REGISTER = """
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], 'GT', ARGV[3], ARGV[1])
return 1
"""

# Forget queues idle since before ARGV[1]. KEYS: queues, specs.
PRUNE = """
local idle = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
for _, q in ipairs(idle) do
  redis.call('ZREM', KEYS[1], q)
  redis.call('HDEL', KEYS[2], q)
end
return #idle
"""
