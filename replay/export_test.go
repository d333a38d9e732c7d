package replay

// MarshalRequest is marshalRequest, for the external tests.
var MarshalRequest = marshalRequest
