/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261201T180314Z/raw/profile-bare.perf.data -p 2867,2868
