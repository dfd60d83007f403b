# taskgraph's server: a static binary on a distroless base, run as a non-root
# user. Build: docker build -t taskgraph .  Run and configure: see
# docs/operations.md ("Deploying"); deploy/docker_test.go keeps this file and
# that page in step, and CI runs the build command below.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /taskgraph .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /taskgraph /taskgraph
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/taskgraph"]
# DynamoDB through the SDK's configuration (region and credentials from the
# environment or the task role), the table managed by deploy/cloudformation.yaml.
CMD ["-production", "-store=aws", "-create-table=false"]
