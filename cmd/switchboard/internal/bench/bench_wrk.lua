-- The submissions of `switchboard bench --load wrk` (bench_wrk.go runs it), for wrk 4:
--   wrk -t T -c C -d D -s bench_wrk.lua URL -- TOKEN BODY_FILE FIRST COUNT KEY_PREFIX OUT_PREFIX T
-- Thread t of T submits the messages FIRST+t, FIRST+t+T, … below FIRST+COUNT, each once under
-- the Idempotency-Key KEY_PREFIX..index. Once it has sent its share, its connections send its
-- last submission again (a replay under the same key, which adds no message) until every one of
-- its submissions has its answer. Then it writes OUT_PREFIX..t..".ids" (written to a temporary
-- name and renamed): one line per submission, the message id of a 202 or "!" and the status,
-- and stops. The bench interrupts wrk once every thread's file is there; done prints the
-- latency figures as one JSON line.

local next_thread = 0

function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  token, body_file, first, count = args[1], args[2], tonumber(args[3]), tonumber(args[4])
  key_prefix, out_prefix = args[5], args[6]
  local f = assert(io.open(body_file, "rb"))
  body = f:read("*a")
  f:close()
  tid = wrk.thread:get("tid")
  threads = tonumber(args[7])
  next_index = first + tid
  stride = threads
  last_index = nil
  share = 0
  for i = first + tid, first + count - 1, stride do
    share = share + 1
  end
  answered, seen, lines, finished = 0, {}, {}, false
  -- wrk calls the first thread's request() once before it starts, to check the request, and
  -- never sends that one: it must not use up a submission.
  verifying = tid == 0
  headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}
end

function request()
  if verifying then
    verifying = false
    return wrk.format("POST", "/v1/messages", headers, body)
  end
  local i = next_index
  if i < first + count then
    next_index = next_index + stride
    last_index = i
  else
    i = last_index or first
  end
  headers["Idempotency-Key"] = key_prefix .. i
  return wrk.format("POST", "/v1/messages", headers, body)
end

function response(status, _, resp)
  if finished then
    return
  end
  if status == 202 then
    local id = resp:match('"id"%s*:%s*"([^"]+)"')
    if id ~= nil and not seen[id] then
      seen[id] = true
      lines[#lines + 1] = id
      answered = answered + 1
    end
  else
    lines[#lines + 1] = "!" .. status
    answered = answered + 1
  end
  if answered >= share then
    finished = true
    local name = out_prefix .. tid .. ".ids"
    local f = assert(io.open(name .. ".tmp", "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    os.rename(name .. ".tmp", name)
    wrk.thread:stop()
  end
end

function done(summary, latency, _)
  io.write(string.format('\n{"p50Us": %d, "p99Us": %d, "requests": %d}\n',
    latency:percentile(50), latency:percentile(99), summary.requests))
end
