/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T053911Z/raw/profile-nginx.perf.data -p 20736,20737
