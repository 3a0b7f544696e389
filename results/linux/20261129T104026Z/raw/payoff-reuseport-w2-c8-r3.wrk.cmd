/usr/bin/wrk -t2 -c8 -d4s --latency --timeout 2s 'http://127.0.0.1:34617/work?us=500'
