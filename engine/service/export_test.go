package service

// EncodedForTest holds the two forms encodeAnswer returns.
type EncodedForTest struct{ Sent, Audited []byte }

// EncodeAnswerForTest exposes encodeAnswer to the external tests.
func EncodeAnswerForTest(v any) (EncodedForTest, error) {
	sent, audited, err := encodeAnswer(v)
	return EncodedForTest{Sent: sent, Audited: audited}, err
}

// RecordVersionsForTest returns the current version of each audit record
// kind.
func RecordVersionsForTest() map[string]int {
	out := make(map[string]int, len(recordVersions))
	for k, v := range recordVersions {
		out[string(k)] = v
	}
	return out
}

// EncodeAnswerAppendForTest exposes encodeAnswerAppend: Sent is what it
// appended to dst.
func EncodeAnswerAppendForTest(dst []byte, v any) (out []byte, audited []byte, err error) {
	return encodeAnswerAppend(dst, v)
}
