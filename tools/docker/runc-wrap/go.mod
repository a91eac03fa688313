module hcs-testbed/tools/docker/runc-wrap

go 1.24
