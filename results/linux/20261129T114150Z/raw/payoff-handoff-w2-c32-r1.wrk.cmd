/usr/bin/wrk -t2 -c32 -d3s --latency --timeout 2s 'http://127.0.0.1:34011/work?us=500'
