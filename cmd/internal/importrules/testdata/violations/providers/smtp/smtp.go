// Package smtp breaks the rules on purpose: it imports another provider and scripting.
package smtp

import (
	_ "switchboard/providers/httpgw"
	_ "switchboard/scripting"
)
