/usr/bin/wrk -t1 -c16 -d3s --latency --timeout 2s http://127.0.0.1:43407/pid
