package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/deadletter"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/llm"
)

// replayTimeout is replay-evaluations' limit when --timeout is not given: an event evaluates a
// batch of up to 1,000 spans, far more than the global default allows.
const replayTimeout = 30 * time.Minute

type replayOptions struct {
	IO  *cmdutil.IOStreams
	Env func(ctx context.Context) (*app.Env, aws.Config, error)

	QueueURL          string
	Max               int
	VisibilityTimeout time.Duration
}

func newCmdReplayEvaluations(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &replayOptions{IO: f.IO}
	var bucket string
	opts.Env = func(ctx context.Context) (*app.Env, aws.Config, error) { return t.env(ctx, bucket) }
	cmd := &cobra.Command{
		Use:   "replay-evaluations --queue-url URL [--bucket NAME] [--max N]",
		Short: "Evaluate again the events the judge runner gave up on",
		Long: `Receive the events of the judge runner's dead-letter queue (the stack's output
EvaluationDeadLetterQueueUrl, or PLUME_EVALUATION_DLQ_URL) and run each here, with the code of
EvaluatorFunction: the spans of the batch each names are evaluated by the project's judges as
the function would have, and the message is deleted once its event succeeded. An event that
fails again stays on the queue and becomes visible after the queue's visibility timeout; the
failures are listed at the end.

Replaying is safe at any time: a span a judge has evaluated already, for the same content, is
not sent to the model again, and the evaluation is written once.

It reads the table (--table or TABLE_NAME), the bucket (--bucket or BUCKET_NAME) and the queue
with the AWS SDK's configuration from the environment, and calls the judges' models with the
provider keys of PLUME_PROVIDER_SECRET (a Secrets Manager secret) or the environment's
(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...; Bedrock with the AWS credentials). Without --timeout it
stops after ` + replayTimeout.String() + `.`,
		Example: `  plume admin replay-evaluations --table plume-Table-1X2Y3Z --bucket plume-bucket-4a5b6c \
    --queue-url https://sqs.us-east-1.amazonaws.com/123456789012/plume-EvaluationDeadLetterQueue-7d8e9f
  plume admin replay-evaluations --queue-url "$DLQ_URL" --max 10 --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.QueueURL == "" {
				opts.QueueURL = f.Getenv("PLUME_EVALUATION_DLQ_URL")
			}
			if opts.QueueURL == "" {
				return cmdutil.FlagErrorf("no queue: pass --queue-url or set PLUME_EVALUATION_DLQ_URL")
			}
			if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > 12*time.Hour {
				return cmdutil.FlagErrorf("--visibility-timeout must be between 0 and 12h, got %s", opts.VisibilityTimeout)
			}
			if opts.Max < 0 {
				return cmdutil.FlagErrorf("--max must not be negative, got %d", opts.Max)
			}
			var err error
			if bucket, err = bucketOf(f, bucket); err != nil {
				return err
			}
			ctx, cancel := longRunContext(cmd, f, replayTimeout)
			defer cancel()
			return replayRun(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.QueueURL, "queue-url", "", "`URL` of the dead-letter queue (default: $PLUME_EVALUATION_DLQ_URL)")
	cmd.Flags().StringVar(&bucket, "bucket", "", "S3 bucket `name` (default: $BUCKET_NAME)")
	cmd.Flags().DurationVar(&opts.VisibilityTimeout, "visibility-timeout", 0, "hide a message whose event fails again for this `duration` (default: the queue's)")
	cmd.Flags().IntVar(&opts.Max, "max", 0, fmt.Sprintf("receive at most `n` messages (default %d)", deadletter.DefaultReplayMax))
	return cmd
}

// env is the composition root of a command that runs functions' code: the table, the bucket
// and the model client, from the environment.
func (t *target) env(ctx context.Context, bucket string) (*app.Env, aws.Config, error) {
	name, err := t.name()
	if err != nil {
		return nil, aws.Config{}, err
	}
	getenv := func(k string) string {
		switch k {
		case "TABLE_NAME":
			return name
		case "BUCKET_NAME":
			return bucket
		}
		return t.f.Getenv(k)
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, aws.Config{}, errs.Invalid("%v", err)
	}
	client, err := t.f.DynamoDB(ctx)
	if err != nil {
		return nil, aws.Config{}, err
	}
	awsCfg, err := config.AWS(ctx)
	if err != nil {
		return nil, aws.Config{}, errs.Invalid("%v", err)
	}
	custom := getenv("AWS_ENDPOINT_URL_S3") != "" || getenv("AWS_ENDPOINT_URL") != ""
	clients := app.Clients{
		DynamoDB: client,
		Blobs:    blob.New(blob.NewClient(awsCfg, custom), bucket),
	}
	clients.Models = func(ctx context.Context) (*llm.Client, error) { return app.ModelsFromEnv(ctx, cfg, awsCfg, getenv) }
	return app.NewEnv(cfg, clients), awsCfg, nil
}

func replayRun(ctx context.Context, opts *replayOptions) error {
	env, awsCfg, err := opts.Env(ctx)
	if err != nil {
		return err
	}
	runner, err := evaluator.FromEnv(ctx, env)
	if err != nil {
		return err
	}
	queue := deadletter.New(awsjson.New(awsCfg, awsjson.SQS), opts.QueueURL)
	res, err := queue.Replay(ctx, runner.Handle, deadletter.ReplayOptions{Max: opts.Max, VisibilityTimeout: opts.VisibilityTimeout})
	if opts.IO.JSON() {
		problems := make([]map[string]string, 0, len(res.Problems))
		for _, p := range res.Problems {
			problems = append(problems, map[string]string{"message_id": p.MessageID, "error": p.Err.Error()})
		}
		if werr := opts.IO.WriteJSON(map[string]any{
			"received": res.Received, "replayed": res.Replayed, "failed": res.Failed, "skipped": res.Skipped, "problems": problems,
		}); werr != nil {
			return werr
		}
	} else {
		if _, werr := fmt.Fprintf(opts.IO.Out, "Received %d, replayed %d, failed %d, skipped %d.\n", res.Received, res.Replayed, res.Failed, res.Skipped); werr != nil {
			return werr
		}
		for _, p := range res.Problems {
			opts.IO.Infof("message %s: %v", p.MessageID, p.Err)
		}
	}
	if err != nil {
		return err
	}
	if res.Failed > 0 {
		return errs.Unavailable("%d of %d events failed again; they stay on the queue", res.Failed, res.Received)
	}
	return nil
}
