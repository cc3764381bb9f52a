-- The requests of bench/http.py's wrk runs, told by the environment, and its report.
--   WRK_METHOD (GET), WRK_BODY (none), WRK_TOKEN (a bearer token, none), WRK_GZIP (1: take gzip)
-- done() prints one JSON line beginning "WRK " that bench/http.py reads: the requests, the
-- errors and the latency quantiles in microseconds (wrk's own, corrected for coordinated
-- omission only as far as wrk does: it is a closed loop of -c connections).

wrk.method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end
local token = os.getenv("WRK_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
if os.getenv("WRK_GZIP") == "1" then
  wrk.headers["Accept-Encoding"] = "gzip"
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'WRK {"requests": %d, "seconds": %.6f, "non_2xx": %d, "socket_errors": %d, '
      .. '"p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d}\n',
    summary.requests, summary.duration / 1e6, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
