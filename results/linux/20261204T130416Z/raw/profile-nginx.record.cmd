/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T130416Z/raw/profile-nginx.perf.data -p 1604,1605
