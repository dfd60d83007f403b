# taskgraph's server: a static binary on an empty (scratch) base with only
# the CA certificates it needs for TLS to AWS, run as a non-root user. Build: docker build -t taskgraph .  Run and configure: see
# docs/operations.md ("Deploying"); deploy/docker_test.go keeps this file and
# that page in step, and CI runs the build command below.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /taskgraph .

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /taskgraph /taskgraph
# 65532: an unprivileged uid/gid with no account (nothing in the image runs as root).
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/taskgraph"]
# DynamoDB through the SDK's configuration (region and credentials from the
# environment or the task role), the table managed by deploy/cloudformation.yaml.
CMD ["-production", "-store=aws", "-create-table=false"]
