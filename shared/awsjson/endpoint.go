package awsjson

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// The method sets by which a service client asks the configuration's sources (the
// environment, the shared config files: aws.Config.ConfigSources) for configured endpoints.
type (
	serviceEndpointSource interface {
		GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
	}
	ignoreEndpointsSource interface {
		GetIgnoreConfiguredEndpoints(ctx context.Context) (bool, bool, error)
	}
)

// endpoint is the URL the operations of svc are posted to, resolved as the SDK's service
// clients resolve it:
//  1. the service's own configured endpoint (AWS_ENDPOINT_URL_<SERVICE>, or a services
//     section of the shared config), unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS; as the
//     SDK does, it is not asked when AWS_ENDPOINT_URL is set and the service's own
//     variable is not;
//  2. cfg.BaseEndpoint (AWS_ENDPOINT_URL);
//  3. the region's endpoint: https://<prefix>.<region>.amazonaws.com (.com.cn in China).
func endpoint(cfg aws.Config, svc Service) (string, error) {
	if u, ok := configuredEndpoint(cfg, svc); ok {
		return u, nil
	}
	if cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		return *cfg.BaseEndpoint, nil
	}
	if cfg.Region == "" {
		return "", errors.New("no region (AWS_REGION) and no endpoint configured")
	}
	suffix := "amazonaws.com"
	if strings.HasPrefix(cfg.Region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://" + svc.EndpointPrefix + "." + cfg.Region + "." + suffix, nil
}

// configuredEndpoint is the service's own endpoint from the configuration's sources.
func configuredEndpoint(cfg aws.Config, svc Service) (string, bool) {
	_, global := os.LookupEnv("AWS_ENDPOINT_URL")
	_, own := os.LookupEnv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(svc.ID), " ", "_"))
	if global && !own {
		return "", false
	}
	ctx := context.Background()
	for _, src := range cfg.ConfigSources {
		if s, ok := src.(ignoreEndpointsSource); ok {
			if ignore, found, err := s.GetIgnoreConfiguredEndpoints(ctx); err == nil && found {
				if ignore {
					return "", false
				}
				break
			}
		}
	}
	for _, src := range cfg.ConfigSources {
		if s, ok := src.(serviceEndpointSource); ok {
			u, found, err := s.GetServiceBaseEndpoint(ctx, svc.ID)
			if err != nil {
				return "", false
			}
			if found {
				return u, u != ""
			}
		}
	}
	return "", false
}
