/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T034129Z/raw/profile-bare.perf.data -p 12675,12676
