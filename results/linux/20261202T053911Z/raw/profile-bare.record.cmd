/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T053911Z/raw/profile-bare.perf.data -p 20719,20720
