/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T130416Z/raw/profile-bare.perf.data -p 1587,1588
