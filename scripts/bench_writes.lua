-- wrk script of scripts/bench_writes.py: single-object creates of messages, each thread
-- stopping once it has had its share of answers (wrk itself runs for a duration, not a count).
-- Env: WL_COUNT   creates in all (split evenly between the threads)
--      WL_THREADS the thread count given to wrk (-t)
--      WL_AUTH    the Authorization header
--      WL_USER_ID the user_id sent (the resource stamps its owner anyway)
-- Prints in done(): RESULT <seconds> <requests> <non-2xx answers> <socket errors>
-- A thread stops after its last answer; with several connections per thread, the requests
-- already sent by its other connections are still answered and counted, so `requests` may
-- pass WL_COUNT by a few (bench_writes.py counts the rows it finds written).

local count = tonumber(os.getenv("WL_COUNT") or "10000")
local nthreads = tonumber(os.getenv("WL_THREADS") or "1")
local auth = os.getenv("WL_AUTH") or ""
local user_id = os.getenv("WL_USER_ID") or "1"

local threads = 0
function setup(thread)
  thread:set("thread_no", threads)
  local share = math.floor(count / nthreads)
  if threads < count % nthreads then share = share + 1 end
  thread:set("quota", share)
  threads = threads + 1
end

local sent = 0
local answered = 0

request = function()
  sent = sent + 1
  local body = string.format('{"user_id": %s, "content": "single import %d-%d"}',
                             user_id, thread_no or 0, sent)
  return wrk.format("POST", nil,
                    {["Content-Type"] = "application/json", ["Authorization"] = auth}, body)
end

response = function(status, headers, body)
  answered = answered + 1
  if answered >= quota then
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %.3f %d %d %d\n", summary.duration / 1e6, summary.requests,
    e.status, e.connect + e.read + e.write + e.timeout))
end
