// GENERATED FILE: do not edit. Made from openapi.yaml by: bash scripts/embed-openapi.sh
// Edit openapi.yaml and run it again; GeneratedFilesAreFresh fails when this file differs from what the
// script makes.

/// The OpenAPI document served at `GET /openapi.yaml` (generated, do not edit).
package enum EmbeddedOpenAPI {
    /// `openapi.yaml`, byte for byte.
    package static let yaml = #"""
        openapi: 3.1.0
        info:
          title: Lifeline
          version: 0.1.0
          summary: Self-hosted ingestion and analysis of Apple MetricKit diagnostics.
          description: |
            iOS apps POST the `jsonRepresentation()` of `MXMetricPayload` and `MXDiagnosticPayload`
            (gzip or plain). Lifeline stores them durably and answers aggregate questions.

            **Percentiles.** MetricKit reports histograms as bucket counts only. Lifeline merges the
            buckets of every payload in scope (identical bounds are added), sorts them by start, finds
            the bucket holding rank `q × samples`, and interpolates linearly inside it as if its samples
            were spread evenly: `start + (end − start) × (rank − below) / count`. A bucket whose start
            equals its end yields that value exactly. Values are in milliseconds. The rollups keep at most
            128 buckets per histogram, app version and day: when payloads do not share a bucket layout
            (MetricKit's layouts are fixed, so in practice they do), neighbouring buckets are merged into
            one spanning both, so counts stay exact and the estimate's resolution is that of the wider bucket.

            **Device-days.** MetricKit carries no device id; one metric payload covers about one device
            for one day, so rates are per 1,000 metric payloads ("device-days").

            **Windows.** `from` and `to` are UTC days, inclusive; the default is the 30 days ending today.
            Rows are computed from rollups kept per app × day × version × OS × device.
        servers:
          - url: http://127.0.0.1:8080
        security:
          - bearer: []
        tags:
          - name: ingest
          - name: query
          - name: health
          - name: alerts
          - name: symbols
        paths:
          /healthz:
            get:
              tags: [health]
              summary: The process answers.
              security: []
              responses:
                "200":
                  description: Alive.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/Status" }
          /readyz:
            get:
              tags: [health]
              summary: The database answers and the writer accepts work.
              security: []
              responses:
                "200":
                  description: Ready.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/Status" }
                "503":
                  description: Not ready.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/Status" }
          /openapi.yaml:
            get:
              tags: [health]
              summary: This document.
              security: []
              responses:
                "200":
                  description: The OpenAPI document.
                  content:
                    application/yaml:
                      schema: { type: string }
          /:
            get:
              tags: [dashboard]
              summary: The built-in dashboard page (HTML).
              description: |
                Server-rendered HTML, no script: one app's report sections (exits, expiration handlers,
                restoration, crashes, percentiles, alerts) with app, window and version pickers. Needs a
                read or admin key, as `Authorization: Bearer` or the `lifeline_session` cookie set by
                `POST /login` (an opaque session id, never the key); without one it answers the login form.
                Every HTML answer carries a CSP with `frame-ancestors 'none'`, `X-Content-Type-Options:
                nosniff` and `Referrer-Policy: no-referrer`.
              security: []
              parameters:
                - { name: app, in: query, schema: { type: string }, description: Bundle identifier (default the first app the key can read). }
                - { name: from, in: query, schema: { type: string, pattern: "^([2-9][0-9]{3}-[0-9]{2}-[0-9]{2})?$" }, description: "First UTC day, YYYY-MM-DD (empty or absent: 29 days before `to`)." }
                - { name: to, in: query, schema: { type: string, pattern: "^([2-9][0-9]{3}-[0-9]{2}-[0-9]{2})?$" }, description: "Last UTC day, YYYY-MM-DD (empty or absent: today)." }
                - { name: version, in: query, schema: { type: string }, description: An app version to include (repeatable; none = all). }
              responses:
                "200":
                  description: The dashboard, or the login form without a key.
                  content:
                    text/html:
                      schema: { type: string }
                "400":
                  description: The window is not two dates, from ≤ to (the page says so).
                  content:
                    text/html:
                      schema: { type: string }
                "401":
                  description: The key (header or cookie) is unknown, revoked or not a read key; the login form.
                  content:
                    text/html:
                      schema: { type: string }
          /login:
            post:
              tags: [dashboard]
              summary: Sign in to the dashboard with a read key.
              description: |
                Refused with 403 unless the `Origin` header (or, without one, `Referer`) names this
                site (login CSRF). Opens a server-side session of 12 hours (`server.session_hours`).
              security: []
              requestBody:
                required: true
                content:
                  application/x-www-form-urlencoded:
                    schema:
                      type: object
                      required: [key]
                      properties:
                        key: { type: string, description: A read or admin key. }
              responses:
                "302":
                  description: |
                    Signed in; `Set-Cookie` holds an opaque session id (`lls_…`; HttpOnly, SameSite=Strict,
                    `Secure` over TLS), never the key; redirects to `/`.
                "401":
                  description: Unknown, revoked, expired or not a read key; the login form again.
                  content:
                    text/html:
                      schema: { type: string }
                "403":
                  description: The form was not sent from this site (Origin/Referer); nothing is signed in.
                  content:
                    text/html:
                      schema: { type: string }
          /logout:
            post:
              tags: [dashboard]
              summary: End the dashboard session (deleted server-side) and clear its cookie.
              security: []
              responses:
                "303":
                  description: Cookie cleared; redirects to `/`.
          /metrics:
            get:
              tags: [health]
              summary: Prometheus metrics (read or admin key).
              description: |
                Prometheus text format 0.0.4. The service's own health (`lifeline_http_requests_total`,
                `lifeline_ingest_duration_seconds`, `lifeline_ingest_payloads_total`,
                `lifeline_writer_batch_requests`, `lifeline_writer_queue_depth`, rule evaluations,
                notifications) and the product's figures per app and version over a trailing window of
                UTC days (`lifeline_app_*`, `lifeline_alerts_firing`), computed by the same query model as
                the `/v1/apps` endpoints. Per app, the most used versions (10 by default) keep their own
                `version` label; the others are folded into `version="other"`. A key scoped to one app sees
                only that app's figures.
              responses:
                "200":
                  description: The metrics.
                  content:
                    text/plain:
                      schema: { type: string }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
          /v1/metrics:
            post:
              tags: [ingest]
              summary: Ingest metric payloads (ingest key).
              description: |
                Body: one `MXMetricPayload` JSON document (`jsonRepresentation()`) or an iOS 27
                `MetricReport` (`"version": "2.0.0"`, `JSONEncoder` output, either state encoding), or a
                JSON array of them (formats may mix), plain or `Content-Encoding: gzip`. Answered only after the rows are committed to disk.
                A document already stored for the app (same decompressed bytes) is a duplicate.
              parameters:
                - $ref: "#/components/parameters/ContentEncoding"
                - $ref: "#/components/parameters/IdempotencyKey"
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      anyOf:
                        - $ref: "#/components/schemas/MetricPayload"
                        - $ref: "#/components/schemas/MetricReport"
                        - type: array
                          minItems: 1
                          maxItems: 1000
                          items: { anyOf: [{ $ref: "#/components/schemas/MetricPayload" }, { $ref: "#/components/schemas/MetricReport" }] }
                    examples:
                      reference: { $ref: "#/components/examples/MetricPayload" }
              responses:
                "202": { $ref: "#/components/responses/Accepted" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "413": { $ref: "#/components/responses/Error" }
                "415": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/Error" }
                "408": { $ref: "#/components/responses/Error" }
                "429": { $ref: "#/components/responses/Limited" }
                "500": { $ref: "#/components/responses/Error" }
                "503": { $ref: "#/components/responses/Limited" }
                "507": { $ref: "#/components/responses/Limited" }
          /v1/diagnostics:
            post:
              tags: [ingest]
              summary: Ingest diagnostic payloads (ingest key).
              description: |
                Body: one `MXDiagnosticPayload`, a bare diagnostic (`version`, `callStackTree`,
                `diagnosticMetaData`), an iOS 27 `DiagnosticReport` (`"version": "2.0.0"`, one diagnostic:
                crash, hang, CPU or disk-write exception, app launch or memory exception), or a JSON array
                of them, plain or gzip.
              parameters:
                - $ref: "#/components/parameters/ContentEncoding"
                - $ref: "#/components/parameters/IdempotencyKey"
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      anyOf:
                        - $ref: "#/components/schemas/DiagnosticPayload"
                        - $ref: "#/components/schemas/Diagnostic"
                        - $ref: "#/components/schemas/DiagnosticReport"
                        - type: array
                          minItems: 1
                          maxItems: 1000
                          items:
                            anyOf: [{ $ref: "#/components/schemas/DiagnosticPayload" }, { $ref: "#/components/schemas/DiagnosticReport" }]
                    examples:
                      crash: { $ref: "#/components/examples/DiagnosticPayload" }
              responses:
                "202": { $ref: "#/components/responses/Accepted" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "413": { $ref: "#/components/responses/Error" }
                "415": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/Error" }
                "408": { $ref: "#/components/responses/Error" }
                "429": { $ref: "#/components/responses/Limited" }
                "500": { $ref: "#/components/responses/Error" }
                "503": { $ref: "#/components/responses/Limited" }
                "507": { $ref: "#/components/responses/Limited" }
          /v1/apps:
            get:
              tags: [query]
              summary: Apps with data (read key; an app-bound key sees its app only).
              responses:
                "200":
                  description: Apps.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [apps]
                        properties:
                          apps:
                            type: array
                            items: { $ref: "#/components/schemas/App" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
          /v1/apps/{bundleId}/summary:
            get:
              tags: [query]
              summary: Headline figures of the window.
              parameters: &scopeParameters
                - $ref: "#/components/parameters/BundleId"
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
                - $ref: "#/components/parameters/AppState"
                - $ref: "#/components/parameters/GroupBy"
              responses:
                "200":
                  description: Summary.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/Summary" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/exits:
            get:
              tags: [query]
              summary: Exit counts per state and reason, with rates (default group_by=version).
              parameters: &pagedParameters
                - $ref: "#/components/parameters/BundleId"
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
                - $ref: "#/components/parameters/AppState"
                - $ref: "#/components/parameters/GroupBy"
                - $ref: "#/components/parameters/Limit"
                - $ref: "#/components/parameters/Cursor"
              responses:
                "200":
                  description: Exit rows.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/ExitsResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/signposts:
            get:
              tags: [query]
              summary: Signpost counts per category and name (default group_by=version).
              parameters: *pagedParameters
              responses:
                "200":
                  description: Signpost rows.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/SignpostsResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/expiration-handlers:
            get:
              tags: [query]
              summary: Background-task expiration handler balance (default group_by=version).
              description: |
                Handlers are found by signpost naming conventions (`<Handler>Entered`/`<Handler>Exited`,
                `.enter`/`.exit`, `Begin`/`End`; configurable). `imbalance = entered − exited`;
                `flagged` when `imbalance / entered` is above the configured ratio (default 0.01) with
                at least the configured entries (default 10). Shown beside the background
                `BackgroundTaskAssertionTimeout` exits of the same group.
              parameters: *pagedParameters
              responses:
                "200":
                  description: Handler rows.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/HandlersResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/restoration:
            get:
              tags: [query]
              summary: State-restoration attempts, failures, error rate and duration percentiles (default group_by=version).
              parameters: *pagedParameters
              responses:
                "200":
                  description: Restoration rows.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/RestorationResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/launch:
            get:
              tags: [query]
              summary: Launch percentiles (time to first draw, optimized, resume, extended launch), in ms (default group_by=version).
              parameters: *pagedParameters
              responses:
                "200":
                  description: Percentile rows.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/PercentilesResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/hangs:
            get:
              tags: [query]
              summary: Hang-time percentiles, in ms (default group_by=version).
              parameters: *pagedParameters
              responses:
                "200":
                  description: Percentile rows.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/PercentilesResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/metrics:
            get:
              tags: [query]
              summary: "Metrics explorer: every MetricKit category per version, device, OS and app state (default group_by=version)."
              description: |
                One row per metric (and series, for signpost hitch ratios) and group, folded by the
                aggregator from legacy payloads and 2.0.0 reports alike. `p50`/`p90` interpolate inside the
                merged buckets of a histogram metric and come from a mergeable sketch across device-days
                (relative error ≤ 1 %) for the others; `mean` is the pooled mean, `error_margin` the
                half-width of its 95 % interval over device-days. Below 50 device-days a row has
                `insufficient_data: true` and every figure `null`. Without `group_by=app_state` (or an
                `app_state` filter) only whole device-days (state `all`) are read. `group_by` accepts
                version, device, os and app_state (not day).
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
                - $ref: "#/components/parameters/AppState"
                - $ref: "#/components/parameters/GroupBy"
                - name: category
                  in: query
                  description: One category; every category when absent.
                  schema: { type: string, enum: [launch, hang, memory, disk, battery, animation, termination] }
                - $ref: "#/components/parameters/Limit"
                - $ref: "#/components/parameters/Cursor"
              responses:
                "200":
                  description: Explorer rows, in catalog order, then by series, version order and the other keys.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/ExplorerResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/insights:
            get:
              tags: [query]
              summary: "Insights: the newest version against the mean of the versions before it, per metric and percentile."
              description: |
                Organizer's method: for p50 and p90 of each metric (and series), the latest version's
                percentile across its device-days against the mean of each reference version's. The 95 %
                interval of the delta comes from a seeded bootstrap over device-days (reproducible).
                `regressions`: worse by ≥ 10 % with the interval clear of 0; `trending_up`: worse by ≥ 10 %
                with the interval touching 0; `insufficient_data`: under 100 device-days on either side or
                no reference version; `unchanged`: the rest. `high_impact` from 100 % worse. Regressions
                and trends come largest delta first. With `group_by=device` each device type is a
                population of its own beside every device (`device: null`).
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
                - name: group_by
                  in: query
                  description: "`device` to add one population per device type; nothing else."
                  schema: { type: string, enum: [device] }
                - $ref: "#/components/parameters/Latest"
                - $ref: "#/components/parameters/Reference"
              responses:
                "200":
                  description: Insights by classification.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/InsightsResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/perfPowerMetrics:
            get:
              tags: [query]
              summary: "The explorer and insights in App Store Connect's perfPowerMetrics shape (xcodeMetrics)."
              description: |
                `productData → metricCategories → metrics → datasets (filterCriteria: device, percentile)
                → points (version, value, errorMargin, goal)` and `insights.regressions` / `trendingUp`,
                field for field as App Store Connect answers `GET /v1/apps/{id}/perfPowerMetrics`, so tools
                written for it read a self-hosted Lifeline unchanged. One dataset per device (`all` and each
                device type) and percentile; rows with insufficient data give no point.
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
                - $ref: "#/components/parameters/Latest"
                - $ref: "#/components/parameters/Reference"
              responses:
                "200":
                  description: App Store Connect's xcodeMetrics document.
                  content:
                    application/vnd.apple.xcode-metrics+json:
                      schema: { $ref: "#/components/schemas/XcodeMetrics" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/crashes:
            get:
              tags: [query]
              summary: Crash (and other diagnostic) groups by signature, most frequent first.
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
                - $ref: "#/components/parameters/AppState"
                - $ref: "#/components/parameters/GroupBy"
                - name: kind
                  in: query
                  description: Only one diagnostic kind.
                  schema: { type: string, enum: [crash, hang, cpu_exception, disk_write_exception, app_launch, memory_exception] }
                - $ref: "#/components/parameters/Limit"
                - $ref: "#/components/parameters/Cursor"
              responses:
                "200":
                  description: Crash groups.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/CrashesResponse" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/TooLarge" }
                "503": { $ref: "#/components/responses/ReadLimited" }
          /v1/apps/{bundleId}/crashes/{groupId}:
            get:
              tags: [query]
              summary: One crash group with its sample attributed stack.
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - name: groupId
                  in: path
                  required: true
                  schema: { type: integer }
                - $ref: "#/components/parameters/From"
                - $ref: "#/components/parameters/To"
                - $ref: "#/components/parameters/Version"
                - $ref: "#/components/parameters/OS"
                - $ref: "#/components/parameters/Device"
              responses:
                "200":
                  description: The group.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/CrashGroup" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
          /v1/apps/{bundleId}/dsyms:
            post:
              tags: [symbols]
              summary: Upload debug symbols (the app's symbols key, or an admin key).
              description: |
                A zip of `.dSYM` bundles (`application/zip`, as Xcode archives and CI produce them: every
                `*.dSYM/Contents/Resources/DWARF/<name>` is read), or one DWARF or Mach-O file (a `.dSYM`'s
                `Contents/Resources/DWARF/<name>`; thin or fat) as `application/octet-stream`; streamed to
                disk (at most 1 GiB; a zip is told by its first bytes). Each architecture slice is recorded
                under its `LC_UUID`; frames of that binary are symbolicated when read, crashes stored before
                included. 201 when a slice is new, 200 when every slice was already known; 422
                `invalid_symbols` for a file that is not a Mach-O with an `LC_UUID`. A zip is checked from
                its central directory before anything is inflated (the end record only in the last 64 KiB
                + 22 bytes, zip64 read) and refused whole: 422 `invalid_zip` (no end record, a directory
                that does not fit the file, damaged entries), `unsafe_zip_entry` (an absolute path, a `..`
                component, a link), `zip_too_many_entries` (over 20,000), `zip_bomb` (an entry declaring
                over 200:1), `no_dwarf_in_zip`, `upload_over_budget` (inflating took over 60 s of CPU);
                413 `zip_too_large` (DWARF files declaring or inflating to over 4 GiB in all). The bounds
                are the `symbols:` keys of the config file (README).
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - name: name
                  in: query
                  description: The binary's name for a single DWARF file (default `unnamed`); a zip names its own.
                  schema: { type: string, minLength: 1, maxLength: 255, pattern: "^[^/]+$" }
              requestBody:
                required: true
                content:
                  application/octet-stream:
                    schema: { type: string, format: binary }
                  application/zip:
                    schema: { type: string, format: binary }
              responses:
                "200": { $ref: "#/components/responses/SymbolSlices" }
                "201": { $ref: "#/components/responses/SymbolSlices" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "413": { $ref: "#/components/responses/Error" }
                "415": { $ref: "#/components/responses/Error" }
                "422": { $ref: "#/components/responses/Error" }
                "503": { $ref: "#/components/responses/Error" }
            get:
              tags: [symbols]
              summary: The app's debug symbols, newest first, or with missing=true the binaries lacking them (read key).
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - name: missing
                  in: query
                  description: |
                    `true`: instead of the symbols, the app's own binaries (by UUID) seen in its diagnostics'
                    stacks with no usable debug symbols, most diagnostics first (system binaries left out):
                    none uploaded, or a slice marked unusable (`unusable` says why and since when).
                  schema: { type: string, enum: ["true", "false"] }
              responses:
                "200":
                  description: The symbol slices (`slices`), or the binaries missing symbols (`missing`).
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          slices: { type: array, items: { type: object } }
                          missing:
                            type: array
                            items:
                              type: object
                              required: [uuid, binary_name, diagnostics, unusable]
                              properties:
                                uuid: { type: string }
                                binary_name: { type: [string, "null"] }
                                diagnostics: { type: integer }
                                unusable: { $ref: "#/components/schemas/UnusableSymbols" }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
          /v1/apps/{bundleId}/dsyms/{uuid}:
            delete:
              tags: [symbols]
              summary: Delete one slice of debug symbols, its record and its file (the app's symbols key, or an admin key).
              parameters:
                - $ref: "#/components/parameters/BundleId"
                - name: uuid
                  in: path
                  required: true
                  description: The slice's `LC_UUID`, as listed.
                  schema: { type: string }
              responses:
                "204": { description: Deleted; frames of the binary are no longer symbolicated. }
                "400": { $ref: "#/components/responses/Error" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "404": { $ref: "#/components/responses/Error" }
          /v1/alerts:
            get:
              tags: [alerts]
              summary: Pending, firing and recently resolved alerts, and the state changes of the last 24 h (read key).
              responses:
                "200":
                  description: Alerts.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/AlertsResponse" }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
          /v1/rules:
            get:
              tags: [alerts]
              summary: The loaded alert rules with their last evaluation, values, error and delivery counters (read key).
              responses:
                "200":
                  description: Rules.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [loaded_at, evaluation_interval_seconds, rules, receivers]
                        properties:
                          file: { type: [string, "null"] }
                          loaded_at: { type: string, format: date-time }
                          evaluation_interval_seconds: { type: integer }
                          rules: { type: array, items: { type: object, required: [name, query, op, threshold] } }
                          receivers: { type: array, items: { type: object, required: [name, kind] } }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
          /-/reload:
            post:
              tags: [alerts]
              summary: Reload the alert rule file (admin key). An invalid file is refused and the old rules keep running.
              responses:
                "200":
                  description: Reloaded.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [status, rules, receivers]
                        properties:
                          status: { type: string }
                          rules: { type: integer }
                          receivers: { type: integer }
                "401": { $ref: "#/components/responses/Error" }
                "403": { $ref: "#/components/responses/Error" }
                "422":
                  description: The file has problems, each with its line; nothing was applied.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [error]
                        properties:
                          error:
                            type: object
                            required: [code, message, problems]
                            properties:
                              code: { type: string }
                              message: { type: string }
                              problems: { type: array, items: { type: string } }
        components:
          securitySchemes:
            bearer:
              type: http
              scheme: bearer
              description: "`lifeline keys create`: ingest keys post payloads of one app; read keys query."
          parameters:
            ContentEncoding:
              name: Content-Encoding
              in: header
              description: gzip (or x-gzip), identity, or absent. Anything else is 415.
              schema: { type: string }
            IdempotencyKey:
              name: Idempotency-Key
              in: header
              description: 1 to 255 visible ASCII characters (e.g. a UUID). A repeated key (per app) replays the first answer.
              schema: { type: string, minLength: 1, maxLength: 255, pattern: "^[!-~]+$" }
            BundleId:
              name: bundleId
              in: path
              required: true
              description: The app's bundle identifier (percent-encoded if needed), 1 to 255 bytes.
              schema: { type: string, minLength: 1, maxLength: 255, example: com.example.notes }
              example: com.example.notes
            From:
              name: from
              in: query
              description: First UTC day, inclusive, 2000-01-01 to 9999-12-31 (default 29 days before `to`); at most 3,660 days before `to`.
              schema: { type: string, format: date, pattern: "^[2-9][0-9]{3}-[0-9]{2}-[0-9]{2}$" }
            To:
              name: to
              in: query
              description: Last UTC day, inclusive, 2000-01-01 to 9999-12-31 (default today).
              schema: { type: string, format: date, pattern: "^[2-9][0-9]{3}-[0-9]{2}-[0-9]{2}$" }
            Version:
              name: version
              in: query
              description: Comma list of app versions.
              schema: { type: string }
            OS:
              name: os
              in: query
              description: Comma list of OS versions as sent (e.g. `iPhone OS 17.4 (21E219)`).
              schema: { type: string }
            Device:
              name: device
              in: query
              description: Comma list of device types (`iPhone15,2,iPhone14,3` is read as two devices).
              schema: { type: string }
            AppState:
              name: app_state
              in: query
              description: |
                Comma list of app states (iOS 27 reports) as `domain/label` (any metadata), e.g.
                `com.example.screen/checkout`. With it (or `group_by=app_state`) the figures come from the
                per-state rows: a device-day counts for a state its report lists; exits, hangs, launches and
                signposts are those observed while the state was active; a diagnostic counts for the states
                active just before it.
              schema: { type: string }
            Limit:
              name: limit
              in: query
              description: |
                Rows on this page at most, 1 to the server's row cap (`query.max_rows`, default 10,000),
                which is also the default. For crashes, the most frequent groups first.
              schema: { type: integer, minimum: 1 }
            Cursor:
              name: cursor
              in: query
              description: |
                Opaque: the `next_cursor` of the previous page. Repeat the same query (only `limit` may
                change); the page starts after the last row of the previous one, in the endpoint's
                deterministic order, so each row is returned once. 400 `invalid_parameter` naming `cursor`
                for a cursor that is not one, belongs to another query, or whose row has gone.
              schema: { type: string, maxLength: 512 }
            Latest:
              name: latest
              in: query
              description: The version compared (default the newest in the window, in version order).
              schema: { type: string, minLength: 1 }
            Reference:
              name: reference
              in: query
              description: How many versions before it are the reference (1…20, default 3).
              schema: { type: integer, minimum: 1, maximum: 20 }
            GroupBy:
              name: group_by
              in: query
              description: Comma list of version, os, device, day, app_state. Empty for one total row.
              schema: { type: string }
          responses:
            SymbolSlices:
              description: Debug symbol slices.
              content:
                application/json:
                  schema:
                    type: object
                    required: [slices]
                    properties:
                      slices:
                        type: array
                        items:
                          type: object
                          required: [uuid, arch, binary_name, size, uploaded_at, unusable]
                          properties:
                            uuid: { type: string }
                            arch: { type: string }
                            binary_name: { type: string }
                            size: { type: integer }
                            uploaded_at: { type: string }
                            unusable: { $ref: "#/components/schemas/UnusableSymbols" }
                            imported: { type: boolean, description: "On upload: false when the slice was already known." }
            Accepted:
              description: Stored durably (or already stored).
              content:
                application/json:
                  schema:
                    type: object
                    required: [accepted, duplicates, ids]
                    properties:
                      accepted: { type: integer, description: Documents newly stored. }
                      duplicates: { type: integer, description: Documents already stored (or a replayed Idempotency-Key). }
                      ids:
                        type: array
                        description: One stored payload id per document, in body order.
                        items: { type: integer }
                      kept_raw:
                        type: integer
                        description: |
                          Present when the body is of a major version this release does not read
                          (`"version": "3.0.0"`): 1 when it was kept raw now, 0 when it already was
                          (then `duplicates` is 1). Kept bodies are counted nowhere.
                      reason: { type: string, description: "With `kept_raw`: why the body was not read (`unsupported_version`)." }
                      message: { type: string, description: "With `kept_raw`: what happened, naming the version." }
            Error:
              description: Refused; the message names the problem.
              content:
                application/json:
                  schema: { $ref: "#/components/schemas/Error" }
            TooLarge:
              description: |
                `query_too_large`: the read would materialise more rows than `query.max_source_rows`
                (default 100,000), whatever the page. Narrow the window (`from`, `to`), filter (`version`,
                `os`, `device`) or group by fewer dimensions.
              content:
                application/json:
                  schema: { $ref: "#/components/schemas/Error" }
            ReadLimited:
              description: |
                A bounded read: `query_timeout` (the read ran past `query.timeout_seconds`, default 10 s;
                Retry-After 5), `too_many_reads` (`query.max_concurrent` reads were running for all of
                `query.queue_wait_seconds`; Retry-After 1), or `database_unavailable` (Retry-After 5).
              headers:
                Retry-After:
                  description: Seconds to wait before retrying.
                  schema: { type: integer, minimum: 0 }
              content:
                application/json:
                  schema: { $ref: "#/components/schemas/Error" }
            Limited:
              description: |
                Refused by a resource limit before the body was read, nothing stored: 429 over a rate
                (`ingest_rate_per_key`, `ingest_rate_per_ip`) or the app's daily quota
                (`app_daily_documents`); 503 when the server is saturated (`max_inflight_bytes`,
                `max_queued_documents`) or the database cannot take the write within
                `database.timeout_seconds` (`database_unavailable`); 507 when the disk is
                nearly full (`insufficient_storage`). Retry after `Retry-After` seconds.
              headers:
                Retry-After:
                  description: Seconds to wait before retrying.
                  schema: { type: integer, minimum: 0 }
              content:
                application/json:
                  schema: { $ref: "#/components/schemas/Error" }
          schemas:
            UnusableSymbols:
              type: [object, "null"]
              description: |
                Set once the slice's file crashed `llvm-symbolizer` (twice, on two processes) or gave no
                answer within the request time limit: its frames stay unsymbolicated and it is not tried
                again; uploading the same UUID again replaces the file and clears the mark. `null` otherwise.
              required: [reason, at]
              properties:
                reason: { type: string, enum: [crashed, timed_out] }
                at: { type: string, description: When it was marked (ISO 8601, UTC). }
            MetricPayload:
              type: object
              description: |
                `MXMetricPayload.jsonRepresentation()`. Lenient by design: unknown keys are kept in the raw
                document and read as scalars (strings with units) or histograms, and a value of the wrong
                JSON type is treated as absent, so the types below say what is read, not what is refused.
                Refused (413): more than 1,024 metrics or exit counters, or 4,096 signposts, per document;
                more than 32,768 metrics per body. Dropped and counted, never summed: negative or
                implausible values (exit counts above 1,000,000, event counts above 10⁹, durations above
                30 days, …), names over 256 bytes, buckets past 4,096 per histogram (README, Ingest API).
              required: [timeStampBegin]
              properties:
                timeStampBegin: { $ref: "#/components/schemas/Timestamp" }
                timeStampEnd: { $ref: "#/components/schemas/Timestamp" }
                appVersion: { type: string }
                metaData: { $ref: "#/components/schemas/MetaData" }
                applicationExitMetrics:
                  type: object
                  properties:
                    foregroundExitData: { $ref: "#/components/schemas/ExitCounters" }
                    backgroundExitData: { $ref: "#/components/schemas/ExitCounters" }
                applicationLaunchMetrics:
                  type: object
                  properties:
                    histogrammedTimeToFirstDrawKey: { $ref: "#/components/schemas/Histogram" }
                    histogrammedResumeTime: { $ref: "#/components/schemas/Histogram" }
                    histogrammedOptimizedTimeToFirstDrawKey: { $ref: "#/components/schemas/Histogram" }
                    histogrammedExtendedLaunch: { $ref: "#/components/schemas/Histogram" }
                applicationResponsivenessMetrics:
                  type: object
                  properties:
                    histogrammedAppHangTime: { $ref: "#/components/schemas/Histogram" }
                memoryMetrics:
                  type: object
                  properties:
                    peakMemoryUsage: { $ref: "#/components/schemas/Measurement" }
                    averageSuspendedMemory:
                      type: object
                      properties:
                        averageValue: { $ref: "#/components/schemas/Measurement" }
                        standardDeviation: { type: number }
                        sampleCount: { type: integer }
                cpuMetrics:
                  type: object
                  properties:
                    cumulativeCPUTime: { $ref: "#/components/schemas/Measurement" }
                    cumulativeCPUInstructions: { $ref: "#/components/schemas/Measurement" }
                signpostMetrics:
                  type: array
                  items:
                    type: object
                    properties:
                      signpostCategory: { type: string }
                      signpostName: { type: string }
                      totalSignpostCount: { type: integer }
                      signpostIntervalData:
                        type: object
                        properties:
                          histogrammedSignpostDurations: { $ref: "#/components/schemas/Histogram" }
                          signpostCumulativeCPUTime: { $ref: "#/components/schemas/Measurement" }
                          signpostAverageMemory: { $ref: "#/components/schemas/Measurement" }
                          signpostCumulativeLogicalWrites: { $ref: "#/components/schemas/Measurement" }
            Timestamp:
              type: string
              description: '`YYYY-MM-DD HH:MM:SS ±HHMM` (zone optional, UTC when absent), 2000 or later.'
              pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}"
              example: "2026-10-21 00:00:00 +0000"
            Measurement:
              type: string
              description: A localized number and unit, e.g. `"1,530 ms"`, `"20 sec"`, `"200,000 kB"`, `"50 %"`.
              example: "1,530 ms"
            MetaData:
              type: object
              properties:
                bundleIdentifier: { type: string, description: Must be the ingest key's app when present. }
                appBuildVersion: { type: string }
                appVersion: { type: string }
                osVersion: { type: string, example: "iPhone OS 17.4 (21E219)" }
                deviceType: { type: string, example: "iPhone15,2" }
                regionFormat: { type: string }
                platformArchitecture: { type: string }
                isTestFlightApp: { type: boolean }
                lowPowerModeEnabled: { type: boolean }
                pid: { type: integer }
            ExitCounters:
              type: object
              description: '`cumulative<Reason>ExitCount` counters, 0 to 1,000,000 each.'
              additionalProperties: { type: integer }
              example: { cumulativeNormalAppExitCount: 12, cumulativeMemoryResourceLimitExitCount: 2 }
            Histogram:
              type: object
              properties:
                histogramNumBuckets: { type: integer }
                histogramValue:
                  type: object
                  additionalProperties:
                    type: object
                    properties:
                      bucketStart: { $ref: "#/components/schemas/Measurement" }
                      bucketEnd: { $ref: "#/components/schemas/Measurement" }
                      bucketCount: { type: integer }
            MetricReport:
              type: object
              description: |
                iOS 27 `MetricReport` as `JSONEncoder` writes it (`"version": "2.0.0"`, METRICKIT-27.md):
                `timeRange` (seconds since 2001 or ISO 8601), `environment`, `intervalEntries` (the full-day
                entry gives the payload's metrics, the ~3-hour ones are kept as slices), `stateEntries`
                (an array, or an object keyed by domain with `byStateReportingDomain`). Mapped onto the
                legacy names (README, Ingest API); unknown metric keys are kept in the raw document.
              required: [version, timeRange, intervalEntries]
              properties:
                version: { type: string, enum: ["2.0.0"] }
                timeRange:
                  type: object
                  properties:
                    begin: { type: [number, string] }
                    end: { type: [number, string] }
                environment: { type: object }
                intervalEntries: { type: array, items: { type: object } }
                stateEntries: { type: [array, object] }
            DiagnosticReport:
              type: object
              description: |
                iOS 27 `DiagnosticReport` (`"version": "2.0.0"`): `timeRange`, `environment` (device, pid,
                the app states active before the event, signpost data) and exactly one of the per-kind keys;
                frames are named by joining `binaryUUID` to the tree's `binaryInfo`.
              required: [version, timeRange]
              properties:
                version: { type: string, enum: ["2.0.0"] }
                timeRange: { type: object }
                environment: { type: object }
                crashDiagnostic: { type: object }
                hangDiagnostic: { type: object }
                cpuExceptionDiagnostic: { type: object }
                diskWriteExceptionDiagnostic: { type: object }
                appLaunchDiagnostic: { type: object }
                memoryExceptionDiagnostic: { type: object }
            DiagnosticPayload:
              type: object
              description: |
                `MXDiagnosticPayload.jsonRepresentation()`: up to 250,000 frames per body, 100,000 per
                tree (413 past them). Lenient like metric payloads: a value of the wrong type is absent.
              anyOf:
                - required: [timeStampBegin]
                - required: [timeStampEnd]
                - required: [crashDiagnostics]
                - required: [hangDiagnostics]
                - required: [cpuExceptionDiagnostics]
                - required: [diskWriteExceptionDiagnostics]
                - required: [appLaunchDiagnostics]
              properties:
                timeStampBegin: { $ref: "#/components/schemas/Timestamp" }
                timeStampEnd: { $ref: "#/components/schemas/Timestamp" }
                crashDiagnostics: { type: array, items: { $ref: "#/components/schemas/Diagnostic" } }
                hangDiagnostics: { type: array, items: { $ref: "#/components/schemas/Diagnostic" } }
                cpuExceptionDiagnostics: { type: array, items: { $ref: "#/components/schemas/Diagnostic" } }
                diskWriteExceptionDiagnostics: { type: array, items: { $ref: "#/components/schemas/Diagnostic" } }
                appLaunchDiagnostics: { type: array, items: { $ref: "#/components/schemas/Diagnostic" } }
            Diagnostic:
              type: object
              required: [diagnosticMetaData]
              properties:
                version: { type: string }
                diagnosticMetaData:
                  allOf:
                    - { $ref: "#/components/schemas/MetaData" }
                    - type: object
                      properties:
                        exceptionType: { type: integer }
                        exceptionCode: { type: integer }
                        signal: { type: integer }
                        terminationReason: { type: string }
                        hangDuration: { $ref: "#/components/schemas/Measurement" }
                        launchDuration: { $ref: "#/components/schemas/Measurement" }
                        totalCPUTime: { $ref: "#/components/schemas/Measurement" }
                        writesCaused: { $ref: "#/components/schemas/Measurement" }
                callStackTree:
                  type: object
                  properties:
                    callStackPerThread: { type: boolean }
                    callStacks:
                      type: array
                      items:
                        type: object
                        properties:
                          threadAttributed: { type: boolean }
                          callStackRootFrames: { type: array, items: { $ref: "#/components/schemas/StackFrame" } }
            StackFrame:
              type: object
              properties:
                binaryUUID: { type: string }
                binaryName: { type: string }
                address: { type: integer }
                offsetIntoBinaryTextSegment: { type: integer }
                sampleCount: { type: integer }
                subFrames: { type: array, items: { $ref: "#/components/schemas/StackFrame" } }
            Status:
              type: object
              required: [status]
              properties:
                status: { type: string }
                reason: { type: string }
                leader: { type: boolean, description: "`/readyz`: whether this process runs the singletons (alerting, retention)." }
                aggregation:
                  type: object
                  description: |
                    `/readyz`: the aggregator's lag behind the door — documents acknowledged and not yet
                    folded into the figures, and the age of the oldest. Reported, not judged: answers fold
                    what was acknowledged before they read, so a lag delays reads, never falsifies them.
                  properties:
                    lag_documents: { type: integer, minimum: 0 }
                    lag_seconds: { type: number, minimum: 0 }
            Error:
              type: object
              required: [error]
              properties:
                error:
                  type: object
                  required: [code, message]
                  properties:
                    code:
                      type: string
                      pattern: "^[a-z0-9_]+$"
                      description: |
                        A stable machine-readable code; `message` says what was wrong in words. One of: `empty_body`, `malformed_gzip`, `malformed_json`, `invalid_idempotency_key`, `invalid_parameter`, `unauthorized`, `forbidden`, `not_found`, `unknown_app`, `method_not_allowed`, `body_too_large`, `decompressed_too_large`, `limit_exceeded`, `unsupported_encoding`, `not_metrickit`, `unsupported_version`, `unreadable_time_range`, `invalid`, `invalid_rules`, `internal`, `unavailable`, `database_unavailable` (and `http_<status>` for an error of the HTTP layer itself).
                    message: { type: string }
            Window:
              type: object
              required: [from, to, days]
              properties:
                from: { type: string, format: date }
                to: { type: string, format: date }
                days: { type: integer }
            GroupKeys:
              type: object
              description: The grouping dimensions of a row, present only when grouped by.
              properties:
                version: { type: string }
                os: { type: string }
                device: { type: string }
                day: { type: string, format: date }
                app_state_domain: { type: string, description: "With group_by=app_state: the state's domain." }
                app_state_label: { type: string, description: "With group_by=app_state: the state's label." }
                app_state_metadata:
                  type: object
                  description: "With group_by=app_state: the state's stable metadata (`{}` when none)."
                  additionalProperties: { type: [string, number, boolean] }
            App:
              type: object
              required: [bundle_id, metric_payloads, diagnostic_payloads, first_day, last_day]
              properties:
                bundle_id: { type: string }
                metric_payloads: { type: integer }
                diagnostic_payloads: { type: integer }
                first_day: { type: [string, "null"] }
                last_day: { type: [string, "null"] }
            Summary:
              type: object
              required:
                [app, window, device_days, foreground_exits, background_exits, foreground_exits_per_1000_device_days,
                 background_exits_per_1000_device_days, restoration_attempts, restoration_failures, restoration_error_rate,
                 flagged_handlers, diagnostics, crash_groups]
              properties:
                app: { type: string }
                window: { $ref: "#/components/schemas/Window" }
                device_days: { type: integer }
                foreground_exits: { type: integer }
                background_exits: { type: integer }
                foreground_exits_per_1000_device_days: { type: [number, "null"] }
                background_exits_per_1000_device_days: { type: [number, "null"] }
                restoration_attempts: { type: integer }
                restoration_failures: { type: integer }
                restoration_error_rate: { type: [number, "null"] }
                flagged_handlers: { type: array, items: { type: string } }
                diagnostics:
                  type: object
                  description: Diagnostics per kind.
                  additionalProperties: { type: integer }
                crash_groups: { type: integer }
            Envelope:
              type: object
              required: [app, window, group_by]
              properties:
                app: { type: string }
                window: { $ref: "#/components/schemas/Window" }
                group_by: { type: array, items: { type: string, enum: [version, os, device, day, app_state] } }
                truncated:
                  type: boolean
                  description: |
                    Row-list endpoints: true when rows are left after this page (the answer was over
                    `limit`, by default the server's row cap `query.max_rows`); fetch them with `cursor`.
                next_cursor:
                  type: string
                  description: Present when `truncated`; pass it as `cursor` with the same query for the next page.
            ExitsResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [rows]
                  properties:
                    rows:
                      type: array
                      items:
                        allOf:
                          - $ref: "#/components/schemas/GroupKeys"
                          - type: object
                            required: [state, reason, count, device_days, per_1000_device_days, per_hour]
                            properties:
                              state: { type: string, enum: [foreground, background] }
                              reason: { type: string, description: "e.g. MemoryPressure, BackgroundTaskAssertionTimeout" }
                              count: { type: integer }
                              device_days: { type: integer }
                              per_1000_device_days: { type: [number, "null"] }
                              per_hour: { type: [number, "null"], description: Per hour of foreground (or background) time. }
            SignpostsResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [rows]
                  properties:
                    rows:
                      type: array
                      items:
                        allOf:
                          - $ref: "#/components/schemas/GroupKeys"
                          - type: object
                            required: [category, name, count]
                            properties:
                              category: { type: string }
                              name: { type: string }
                              count: { type: integer }
            HandlersResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [rows]
                  properties:
                    rows:
                      type: array
                      items:
                        allOf:
                          - $ref: "#/components/schemas/GroupKeys"
                          - type: object
                            required:
                              [category, handler, entered, exited, imbalance, imbalance_ratio, flagged,
                               background_task_assertion_timeout_exits]
                            properties:
                              category: { type: string }
                              handler: { type: string }
                              entered: { type: integer }
                              exited: { type: integer }
                              imbalance: { type: integer }
                              imbalance_ratio: { type: [number, "null"] }
                              flagged: { type: boolean }
                              background_task_assertion_timeout_exits: { type: integer }
            RestorationResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [rows]
                  properties:
                    rows:
                      type: array
                      items:
                        allOf:
                          - $ref: "#/components/schemas/GroupKeys"
                          - type: object
                            required: [attempts, failures, error_rate, p50_ms, p95_ms, duration_samples]
                            properties:
                              attempts: { type: integer }
                              failures: { type: integer }
                              error_rate: { type: [number, "null"] }
                              p50_ms: { type: [number, "null"] }
                              p95_ms: { type: [number, "null"] }
                              duration_samples: { type: integer }
            PercentilesResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [rows]
                  properties:
                    rows:
                      type: array
                      items:
                        allOf:
                          - $ref: "#/components/schemas/GroupKeys"
                          - type: object
                            required: [metric, samples, p50_ms, p90_ms, p95_ms, p99_ms]
                            properties:
                              metric:
                                type: string
                                enum: [time_to_first_draw, optimized_time_to_first_draw, resume_time, extended_launch, app_hang_time]
                              samples: { type: integer }
                              p50_ms: { type: [number, "null"] }
                              p90_ms: { type: [number, "null"] }
                              p95_ms: { type: [number, "null"] }
                              p99_ms: { type: [number, "null"] }
            ExplorerResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [rows]
                  properties:
                    rows:
                      type: array
                      items:
                        type: object
                        required:
                          [category, metric, unit, p50, p90, mean, device_days, error_margin, p50_error_margin,
                           p90_error_margin, goal, insufficient_data]
                        properties:
                          category: { type: string, enum: [launch, hang, memory, disk, battery, animation, termination] }
                          metric: { type: string, description: "Catalog id, e.g. launch.time_to_first_draw, memory.peak." }
                          unit:
                            type: string
                            enum: [ms, bytes, instructions, ms_per_s, apl, bars, s_per_h, exits_per_device_day, exits_per_h]
                          subject: { type: string, description: "The series inside the metric (a signpost's category/name)." }
                          version: { type: string }
                          device: { type: string }
                          os: { type: string }
                          app_state: { type: string, description: "`all`, or `domain/label` (then the metadata JSON)." }
                          p50: { type: [number, "null"] }
                          p90: { type: [number, "null"] }
                          mean: { type: [number, "null"] }
                          device_days: { type: integer }
                          error_margin: { type: [number, "null"], description: Half-width of the 95 % interval of mean. }
                          p50_error_margin: { type: [number, "null"] }
                          p90_error_margin: { type: [number, "null"] }
                          goal: { type: [string, "null"], enum: [good, fair, poor, null] }
                          insufficient_data: { type: boolean, description: Fewer than 50 device-days; every figure null. }
            Insight:
              type: object
              required:
                [category, metric, unit, device, percentile, latest_value, reference_value, delta_percentage,
                 confidence_interval, high_impact, classification, latest_device_days, reference_device_days]
              properties:
                category: { type: string }
                metric: { type: string }
                unit: { type: string }
                subject: { type: string }
                device: { type: [string, "null"], description: "null: every device." }
                percentile: { type: integer, enum: [50, 90] }
                latest_value: { type: [number, "null"] }
                reference_value: { type: [number, "null"] }
                delta_percentage: { type: [number, "null"] }
                confidence_interval:
                  type: [array, "null"]
                  description: The 95 % bootstrap interval of the delta, in percent (a bound is null when infinite).
                  items: { type: [number, "null"] }
                high_impact: { type: boolean }
                classification: { type: string, enum: [regression, trending_up, insufficient_data, none] }
                latest_device_days: { type: integer }
                reference_device_days: { type: integer }
            InsightsResponse:
              type: object
              required: [app, window, latest_version, reference_versions, regressions, trending_up, insufficient_data, unchanged]
              properties:
                app: { type: string }
                window: { $ref: "#/components/schemas/Window" }
                latest_version: { type: [string, "null"] }
                reference_versions: { type: array, items: { type: string } }
                regressions: { type: array, items: { $ref: "#/components/schemas/Insight" } }
                trending_up: { type: array, items: { $ref: "#/components/schemas/Insight" } }
                insufficient_data: { type: array, items: { $ref: "#/components/schemas/Insight" } }
                unchanged: { type: array, items: { $ref: "#/components/schemas/Insight" } }
            XcodeMetrics:
              type: object
              description: App Store Connect's xcodeMetrics (every field optional, as in Apple's schema).
              properties:
                version: { type: string }
                insights:
                  type: object
                  properties:
                    regressions: { type: array, items: { $ref: "#/components/schemas/MetricsInsight" } }
                    trendingUp: { type: array, items: { $ref: "#/components/schemas/MetricsInsight" } }
                productData:
                  type: array
                  items:
                    type: object
                    properties:
                      platform: { type: string }
                      metricCategories:
                        type: array
                        items:
                          type: object
                          properties:
                            identifier: { type: string, enum: [HANG, LAUNCH, MEMORY, DISK, BATTERY, TERMINATION, ANIMATION] }
                            metrics:
                              type: array
                              items:
                                type: object
                                properties:
                                  identifier: { type: string }
                                  goalKeys:
                                    type: array
                                    items:
                                      type: object
                                      properties:
                                        goalKey: { type: string }
                                        lowerBound: { type: number }
                                        upperBound: { type: number }
                                  unit:
                                    type: object
                                    properties:
                                      identifier: { type: string }
                                      displayName: { type: string }
                                  datasets:
                                    type: array
                                    items:
                                      type: object
                                      properties:
                                        filterCriteria:
                                          type: object
                                          properties:
                                            percentile: { type: string }
                                            device: { type: string }
                                            deviceMarketingName: { type: string }
                                        points:
                                          type: array
                                          items:
                                            type: object
                                            properties:
                                              version: { type: string }
                                              value: { type: number }
                                              errorMargin: { type: number }
                                              goal: { type: string }
                                              percentageBreakdown:
                                                type: object
                                                properties:
                                                  value: { type: number }
                                                  subSystemLabel: { type: string }
            MetricsInsight:
              type: object
              properties:
                metricCategory: { type: string }
                latestVersion: { type: string }
                metric: { type: string }
                summaryString: { type: string }
                referenceVersions: { type: string }
                maxLatestVersionValue: { type: number }
                subSystemLabel: { type: string }
                highImpact: { type: boolean }
                populations:
                  type: array
                  items:
                    type: object
                    properties:
                      deltaPercentage: { type: number }
                      percentile: { type: string }
                      summaryString: { type: string }
                      referenceAverageValue: { type: number }
                      latestVersionValue: { type: number }
                      device: { type: string }
                      deviceMarketingName: { type: string }
                      deviceType: { type: string }
            Frame:
              type: object
              required: [binary_name, binary_uuid, address, offset]
              properties:
                binary_name: { type: [string, "null"] }
                binary_uuid: { type: [string, "null"] }
                address: { type: string, description: Hexadecimal. }
                offset: { type: string, description: Offset into the binary's text segment, hexadecimal. }
                function: { type: [string, "null"], description: "From uploaded debug symbols (Swift demangled); null when unknown." }
                file: { type: [string, "null"] }
                line: { type: [integer, "null"] }
                inlined:
                  type: array
                  description: The functions the code at this address was inlined into, outermost last.
                  items:
                    type: object
                    properties:
                      function: { type: [string, "null"] }
                      file: { type: [string, "null"] }
                      line: { type: [integer, "null"] }
            CrashGroup:
              type: object
              required:
                [id, fingerprint, kind, group_kind, title, count, count_by_version, first_seen, last_seen, exception_type,
                 exception_name, signal, signal_name, watchdog, sample_stack]
              properties:
                id: { type: integer }
                fingerprint: { type: string }
                kind: { type: string, enum: [crash, hang, cpu_exception, disk_write_exception, app_launch, memory_exception] }
                group_kind: { type: string, description: "The kind, or `watchdog` for 0x8BADF00D terminations." }
                title: { type: string }
                count: { type: integer, description: Occurrences in the window. }
                count_by_version:
                  type: object
                  additionalProperties: { type: integer }
                first_seen: { type: string, format: date }
                last_seen: { type: string, format: date }
                exception_type: { type: [integer, "null"] }
                exception_name: { type: [string, "null"], description: "e.g. EXC_BAD_ACCESS" }
                signal: { type: [integer, "null"] }
                signal_name: { type: [string, "null"], description: "e.g. SIGSEGV" }
                watchdog: { type: boolean }
                termination_reason: { type: [string, "null"], description: Only on the single-group endpoint. }
                termination_category: { type: [string, "null"], description: "iOS 27 samples (badAccess, abnormal, watchdog…); single-group endpoint." }
                exception_message: { type: [string, "null"], description: "The Objective-C exception's composed message of the sample; single-group endpoint." }
                pid: { type: [integer, "null"], description: "iOS 27 samples: the process id; single-group endpoint." }
                signpost_data: { description: "iOS 27 samples: `environment.signpostData` as sent (array), or null; single-group endpoint." }
                sample_stack:
                  type: array
                  description: Top frames of the attributed thread (3 in lists, all kept on the single-group endpoint).
                  items: { $ref: "#/components/schemas/Frame" }
            CrashesResponse:
              allOf:
                - $ref: "#/components/schemas/Envelope"
                - type: object
                  required: [groups]
                  properties:
                    groups:
                      type: array
                      items: { $ref: "#/components/schemas/CrashGroup" }
            AlertsResponse:
              type: object
              required: [alerts, recent_changes]
              properties:
                alerts:
                  type: array
                  items:
                    type: object
                    required: [rule, fingerprint, state, labels, annotations, active_since, value, samples, last_evaluation]
                    properties:
                      rule: { type: string }
                      fingerprint: { type: string }
                      state: { type: string, enum: [pending, firing, resolved] }
                      labels: { type: object, additionalProperties: { type: string } }
                      annotations: { type: object, additionalProperties: { type: string } }
                      active_since: { type: string, format: date-time }
                      fired_at: { type: [string, "null"], format: date-time }
                      resolved_at: { type: [string, "null"], format: date-time }
                      value: { type: [number, "null"] }
                      samples: { type: integer }
                      last_evaluation: { type: string, format: date-time }
                recent_changes:
                  type: array
                  items:
                    type: object
                    required: [rule, fingerprint, labels, from, to, at]
                    properties:
                      rule: { type: string }
                      fingerprint: { type: string }
                      labels: { type: object, additionalProperties: { type: string } }
                      from: { type: string }
                      to: { type: string }
                      at: { type: string, format: date-time }
                      value: { type: [number, "null"] }
          examples:
            MetricPayload:
              summary: A daily metric payload (abridged from a real one).
              value:
                timeStampBegin: "2026-10-21 00:00:00 +0000"
                timeStampEnd: "2026-10-21 23:59:00 +0000"
                appVersion: "4.2.0"
                metaData:
                  bundleIdentifier: com.example.notes
                  appBuildVersion: "420"
                  osVersion: "iPhone OS 17.4 (21E219)"
                  deviceType: "iPhone15,2"
                  regionFormat: US
                  platformArchitecture: arm64e
                applicationExitMetrics:
                  foregroundExitData: { cumulativeNormalAppExitCount: 12, cumulativeAppWatchdogExitCount: 1 }
                  backgroundExitData: { cumulativeMemoryPressureExitCount: 3, cumulativeBackgroundTaskAssertionTimeoutExitCount: 2 }
                applicationLaunchMetrics:
                  histogrammedTimeToFirstDrawKey:
                    histogramNumBuckets: 2
                    histogramValue:
                      "0": { bucketStart: "300 ms", bucketEnd: "400 ms", bucketCount: 14 }
                      "1": { bucketStart: "400 ms", bucketEnd: "800 ms", bucketCount: 5 }
                memoryMetrics: { peakMemoryUsage: "180,224 kB" }
                signpostMetrics:
                  - { signpostCategory: ExpirationHandlers, signpostName: SyncExpirationHandlerEntered, totalSignpostCount: 5 }
                  - { signpostCategory: ExpirationHandlers, signpostName: SyncExpirationHandlerExited, totalSignpostCount: 4 }
            DiagnosticPayload:
              summary: One crash with its call-stack tree.
              value:
                timeStampBegin: "2026-10-21 07:00:00 +0000"
                timeStampEnd: "2026-10-21 07:00:00 +0000"
                crashDiagnostics:
                  - version: "1.0.0"
                    diagnosticMetaData:
                      bundleIdentifier: com.example.notes
                      appVersion: "4.2.0"
                      appBuildVersion: "420"
                      osVersion: "iPhone OS 17.4 (21E219)"
                      deviceType: "iPhone15,2"
                      platformArchitecture: arm64e
                      regionFormat: US
                      exceptionType: 1
                      exceptionCode: 0
                      signal: 11
                    callStackTree:
                      callStackPerThread: true
                      callStacks:
                        - threadAttributed: true
                          callStackRootFrames:
                            - binaryUUID: 8F7E6D5C-4B3A-2918-0706-F5E4D3C2B1A0
                              offsetIntoBinaryTextSegment: 16424
                              binaryName: Notes
                              address: 4295000104
                              sampleCount: 1

        """#
}
