/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T114710Z/raw/profile-nginx.perf.data -p 2139,2140
