/usr/bin/wrk -t2 -c32 -d1s --latency --timeout 2s 'http://127.0.0.1:43393/work?us=500'
