/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T034129Z/raw/profile-nginx.perf.data -p 12692,12693
