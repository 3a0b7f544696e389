/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T003039Z/raw/profile-bare.perf.data -p 1641,1642
