/usr/bin/wrk -t2 -c8 -d3s --latency --timeout 2s 'http://127.0.0.1:37175/work?us=500'
