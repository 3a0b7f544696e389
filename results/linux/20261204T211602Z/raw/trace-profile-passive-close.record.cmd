/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261204T211602Z/raw/trace-profile-passive-close.perf.data -p 31904,31905
