/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T103705Z/raw/profile-bare.perf.data -p 1211,1212
