// Package httpgw keeps the rules: the engine and scripting.
package httpgw

import (
	_ "switchboard/engine"
	_ "switchboard/scripting"
)
