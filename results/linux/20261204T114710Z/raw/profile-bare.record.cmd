/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T114710Z/raw/profile-bare.perf.data -p 2122,2123
