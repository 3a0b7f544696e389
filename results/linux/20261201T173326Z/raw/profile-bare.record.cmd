/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261201T173326Z/raw/profile-bare.perf.data -p 24080,24081
