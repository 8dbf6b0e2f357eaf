// Command tool may import everything of the module.
package main

import (
	_ "switchboard/engine"
	_ "switchboard/providers/smtp"
	_ "switchboard/store"
)

func main() {}
