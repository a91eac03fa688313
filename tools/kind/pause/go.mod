module hcs-testbed/tools/kind/pause

go 1.24
