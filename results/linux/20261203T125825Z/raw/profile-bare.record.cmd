/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T125825Z/raw/profile-bare.perf.data -p 1044,1045
