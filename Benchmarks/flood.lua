-- wrk script: POST the same plain-JSON body (bench-out/flood.json by default) as fast as possible.
-- usage: LIFELINE_KEY=... BODY=bench-out/flood.json wrk -t2 -c64 -d20s -s Benchmarks/flood.lua http://127.0.0.1:8080/v1/metrics
local f = assert(io.open(os.getenv("BODY") or "bench-out/flood.json", "rb"))
local body = f:read("*all"); f:close()
wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("LIFELINE_KEY") or "")
