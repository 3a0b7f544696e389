/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261201T215523Z/raw/profile-nginx.perf.data -p 25199,25200
