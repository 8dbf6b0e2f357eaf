package scripting

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// Regular expressions. goja runs a RegExp that RE2 cannot take (lookahead, lookbehind,
// backreferences), and any RegExp searched from a position other than 0 or over non-ASCII
// text, in github.com/dlclark/regexp2, a backtracking engine: a crafted string of a few dozen
// characters makes one scan run for seconds, in Go, where goja's interrupt cannot reach.
// Three guards bound it, whatever the pattern:
//
//  1. Every scan gives up after regexpScanLimit: goja builds its regexp2 matchers with
//     regexp2.DefaultMatchTimeout, which init sets (goja offers no other way to reach them).
//     A scan that gives up answers "no match" to goja; since the limit is far longer than any
//     deadline DefaultLimits allows, the call's deadline has then passed, and the check after
//     the scan ends the call with ClassDeadline instead of letting the script go on with a
//     wrong answer.
//  2. RegExp.prototype.exec and test check the call's alarm before and after each scan, and
//     after it also the clock, in case the alarm's timer has not fired yet. Replacing exec
//     also turns off goja's fast paths, which match the whole string in one Go loop: match,
//     matchAll, replace and search then call exec once per match.
//  3. RegExp.prototype[Symbol.split] runs the specification's algorithm with one exec per
//     piece (regexpSplit), where goja's own slow path would exec at every position.
//
// After the alarm rings, a call therefore spends at most one scan in Go before the next
// check throws, and the runtime's goroutine stops (runner.go).

// regexpScanLimit is the longest one regexp2 scan may run, and so what an abandoned runtime
// may still spend (runner.go). It must exceed every deadline DefaultLimits allows, so that a
// scan that gives up has outlived its call's deadline, and by a wide margin: regexp2 reads a
// clock that a goroutine of its own advances every 100 ms, and when that goroutine is
// starved on a loaded machine and then catches up, a long scan gives up early, by as much as
// the clock lagged. With 1 s, that clock must lag by 0.9 s before a scan could give up
// within a 200 ms deadline and its "no match" reach the script.
const regexpScanLimit = time.Second

func init() {
	regexp2.DefaultMatchTimeout = regexpScanLimit
}

// installRegExpGuards replaces RegExp.prototype.exec, test and [Symbol.split].
func (sb *sandbox) installRegExpGuards() {
	vm := sb.vm
	sb.regexpCtor = vm.Get("RegExp").ToObject(vm)
	proto := sb.regexpCtor.Get("prototype").ToObject(vm)
	sb.replaceMethod(proto, "exec", func(orig native) native {
		sb.exec = sb.scanGuard(orig)
		return sb.exec
	})
	sb.replaceMethod(proto, "test", sb.scanGuard)
	sb.replaceSymbolMethod(proto, goja.SymSplit, sb.regexpSplit)
}

// scanGuard wraps a built-in that runs one scan: it ends the call when the alarm has rung
// before the scan, or when the deadline passed during it.
func (sb *sandbox) scanGuard(orig native) native {
	return func(call goja.FunctionCall) goja.Value {
		sb.checkAlarm()
		v := orig(call)
		sb.alarm.ringIfOverdue()
		sb.checkAlarm()
		return v
	}
}

// checkAlarm ends the call when its alarm has rung.
func (sb *sandbox) checkAlarm() {
	if i := sb.alarm.rung(); i != nil {
		sb.throwInterrupted(*i)
	}
}

// regexpSplit is RegExp.prototype[Symbol.split]. For a RegExp whose constructor is RegExp
// (every RegExp but instances of subclasses that change it), it runs the specification's
// algorithm, which tries a sticky copy of the RegExp at each position q and cuts where it
// matches, with one search per piece instead: exec of a global copy from q finds the first
// position at or after q where the sticky copy would match, and the same match. Other
// receivers go to goja's own algorithm, which calls their exec.
func (sb *sandbox) regexpSplit(orig native) native {
	return func(call goja.FunctionCall) goja.Value {
		vm := sb.vm
		rx, ok := call.This.(*goja.Object)
		if !ok {
			return orig(call) // throws the TypeError it would
		}
		s := call.Argument(0).ToString()
		limit := call.Argument(1)
		if c := rx.Get("constructor"); c != nil && !goja.IsUndefined(c) && !c.SameAs(sb.regexpCtor) {
			return orig(goja.FunctionCall{This: rx, Arguments: []goja.Value{s, limit}})
		}
		flags := rx.Get("flags").String()
		unicode := strings.ContainsRune(flags, 'u')
		searchFlags := strings.ReplaceAll(flags, "y", "")
		if !strings.ContainsRune(searchFlags, 'g') {
			searchFlags += "g"
		}
		searcher, err := vm.New(sb.regexpCtor, rx, vm.ToValue(searchFlags))
		if err != nil {
			panic(err)
		}
		lim := uint32(math.MaxUint32)
		if !goja.IsUndefined(limit) {
			lim = toUint32(limit.ToFloat())
		}
		if lim == 0 {
			return vm.NewArray()
		}
		str := s.(goja.String)
		size := str.Length()
		search := func(q int) *goja.Object {
			if err := searcher.Set("lastIndex", q); err != nil {
				panic(err)
			}
			z := sb.exec(goja.FunctionCall{This: searcher, Arguments: []goja.Value{str}})
			if goja.IsNull(z) {
				return nil
			}
			return z.ToObject(vm)
		}
		if size == 0 {
			if search(0) != nil {
				return vm.NewArray()
			}
			return vm.NewArray(str)
		}
		var parts []any
		full := func() bool { return uint64(len(parts)) == uint64(lim) }
		p, q := 0, 0
		for q < size {
			z := search(q)
			if z == nil {
				break
			}
			at := int(z.Get("index").ToInteger())
			if at >= size {
				break
			}
			e := int(min(toLength(searcher.Get("lastIndex").ToFloat()), float64(size)))
			if e == p { // an empty match where the last piece ended: no cut here
				q = advanceIndex(str, at, unicode)
				continue
			}
			parts = append(parts, str.Substring(p, at))
			if full() {
				return vm.NewArray(parts...)
			}
			p = e
			captures := int(max(toLength(z.Get("length").ToFloat())-1, 0))
			for i := 1; i <= captures; i++ {
				parts = append(parts, z.Get(strconv.Itoa(i)))
				if full() {
					return vm.NewArray(parts...)
				}
			}
			q = p
		}
		parts = append(parts, str.Substring(p, size))
		return vm.NewArray(parts...)
	}
}

// advanceIndex is AdvanceStringIndex: the next position after i, stepping over a surrogate
// pair in unicode mode.
func advanceIndex(s goja.String, i int, unicode bool) int {
	if unicode && i+1 < s.Length() {
		if c, d := s.CharAt(i), s.CharAt(i+1); 0xD800 <= c && c <= 0xDBFF && 0xDC00 <= d && d <= 0xDFFF {
			return i + 2
		}
	}
	return i + 1
}

// toUint32 is ToUint32 on a number.
func toUint32(f float64) uint32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return uint32(int64(math.Mod(math.Trunc(f), 1<<32)))
}
