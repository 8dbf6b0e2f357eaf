// Package leafkit imports only the standard library: anyone may import it.
package leafkit

import _ "bytes"
