import { TracingSettingsError, tracingSettings } from './tracing-settings';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };

describe('tracingSettings', () => {
  it('when no OTLP endpoint is set, then tracing is off', () => {
    expect(tracingSettings({}, 'booking-api')).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, 'booking-api')).toEqual({ enabled: false });
  });

  it('when an endpoint is set, then tracing is on with the defaults of the OpenTelemetry specification', () => {
    expect(tracingSettings(ENDPOINT, 'booking-api')).toEqual({
      enabled: true,
      serviceName: 'booking-api',
      sampler: { kind: 'parentbased_always_on' },
      batch: { scheduledDelayMillis: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: 30000 },
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, 'x').enabled).toBe(true);
  });

  it('when OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none says so, then an endpoint does not turn it on', () => {
    expect(tracingSettings({ ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }, 'x')).toEqual({ enabled: false });
    expect(tracingSettings({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }, 'x')).toEqual({ enabled: false });
  });

  it('when OTEL_SERVICE_NAME, a sampler and batch settings are given, then they win over the defaults', () => {
    const settings = tracingSettings(
      {
        ...ENDPOINT,
        OTEL_SERVICE_NAME: 'api-eu-1',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      'booking-api',
    );
    expect(settings).toMatchObject({
      serviceName: 'api-eu-1',
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
      batch: { scheduledDelayMillis: 100 },
    });
  });

  it('when a setting asks for what the service cannot do, then start-up fails naming every one', () => {
    const bad = () =>
      tracingSettings(
        {
          ...ENDPOINT,
          OTEL_TRACES_EXPORTER: 'zipkin',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
          OTEL_TRACES_SAMPLER: 'sometimes',
          OTEL_BSP_SCHEDULE_DELAY: 'soon',
        },
        'x',
      );
    expect(bad).toThrow(TracingSettingsError);
    expect(bad).toThrow(
      /OTEL_TRACES_EXPORTER[\s\S]*PROTOCOL: only http\/json is supported, not grpc[\s\S]*OTEL_TRACES_SAMPLER[\s\S]*OTEL_BSP_SCHEDULE_DELAY/,
    );
    expect(() =>
      tracingSettings({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, 'x'),
    ).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
  });
});
