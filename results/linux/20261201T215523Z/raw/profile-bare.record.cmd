/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261201T215523Z/raw/profile-bare.perf.data -p 25182,25183
