module switchboard

go 1.26
