/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261204T211602Z/raw/trace-profile-traced-keepalive.perf.data -p 30218,30219
