/usr/bin/wrk -t2 -c64 -d1s --latency --timeout 2s http://127.0.0.1:34797/
