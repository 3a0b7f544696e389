/usr/bin/wrk -t2 -c32 -d4s --latency --timeout 2s 'http://127.0.0.1:42613/work?us=500'
