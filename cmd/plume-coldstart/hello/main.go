// Command hello is the floor plume-coldstart measures every function against: an
// aws-lambda-go hello world, built with the same flags as the functions.
package main

import "github.com/aws/aws-lambda-go/lambda"

func main() {
	lambda.Start(func() (string, error) { return "hello", nil })
}
