/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261204T211602Z/raw/trace-profile-passive-keepalive.perf.data -p 30239,30240
