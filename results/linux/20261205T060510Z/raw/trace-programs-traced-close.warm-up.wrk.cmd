/usr/bin/wrk -t2 -c16 -d1s --latency --timeout 2s -H 'Connection: close' http://127.0.0.1:43009/
