/usr/bin/wrk -t1 -c32 -d3s --latency --timeout 2s -H 'Connection: close' http://127.0.0.1:44479/pid
