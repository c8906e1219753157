/* SPDX-License-Identifier: MIT */
/*
 * The part of NVIDIA's NVML ABI that accel-monitor uses, declared by hand:
 * no NVIDIA header or library is needed to build; libnvidia-ml.so.1 is
 * opened with dlopen at run time (coll_nvidia.c), and the test suite builds
 * a fake library against these same declarations (tests/helpers/fake_nvml.c).
 *
 * Checked against NVIDIA's published nvml.h, NVML 12.2.140 (NVML_API_VERSION
 * 12; cuda-nvml-dev-12.2.140, as vendored in github.com/NVIDIA/go-nvml
 * pkg/nvml/nvml.h). Every struct below has the layout, and every constant
 * the value, of that header on LP64 Linux (x86_64 and aarch64);
 * tests/unit/test_nvml_abi.c asserts the sizes, offsets and values against
 * the numbers written down from it. Differences in spelling only:
 *  - nvmlDevice_t and nvmlEventSet_t are opaque pointers, as in NVIDIA's
 *    header (go-nvml wraps them in a one-pointer struct, which the C ABI
 *    passes the same way).
 *  - Enums are declared as unsigned int/int typedefs plus constants, which is
 *    what an enum of these values is in the Linux ABI (4 bytes).
 */
#ifndef ACCEL_NVML_H
#define ACCEL_NVML_H

#define NVML_HEADER_CHECKED "NVML 12.2.140 (NVML_API_VERSION 12)"

/* nvmlReturn_t (enum nvmlReturn_enum) */
typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_RESET_REQUIRED 16
#define NVML_ERROR_NO_DATA 21
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* Buffer sizes (NVML_*_BUFFER_SIZE). */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80

/* Value some fields take when they are not available: (unsigned long long)-1 for usedGpuMemory. */
#define NVML_VALUE_NOT_AVAILABLE (-1)
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL

/* nvmlPciInfo_t (struct nvmlPciInfo_st): 68 bytes. */
typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* nvmlUtilization_t: percent of the driver's last sample period. 8 bytes. */
typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

/* nvmlMemory_t (v1): used includes the reserved memory. 24 bytes. */
typedef struct nvmlMemory_st {
	unsigned long long total; /* bytes */
	unsigned long long free;  /* bytes */
	unsigned long long used;  /* bytes */
} nvmlMemory_t;

/* nvmlMemory_v2_t: version must be nvmlMemory_v2. 40 bytes. */
typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total;    /* bytes */
	unsigned long long reserved; /* bytes, for the driver and firmware */
	unsigned long long free;     /* bytes */
	unsigned long long used;     /* bytes */
} nvmlMemory_v2_t;

/* NVML_STRUCT_VERSION(Memory, 2): the size with the version in the top byte. */
#define NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((unsigned int)(ver) << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

/*
 * nvmlProcessInfo_v1_t (16 bytes) is what nvmlDeviceGetComputeRunningProcesses
 * (v1) fills; nvmlProcessInfo_v2_t (24 bytes, also named nvmlProcessInfo_t)
 * is what both the _v2 and the _v3 functions fill. (DCGM's copy of nvml.h
 * once gave the v3 functions a 32-byte struct with usedGpuCcProtectedMemory;
 * no driver header did, and 12.2.140 does not.)
 */
typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE_ULL */
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE_ULL */
	unsigned int gpuInstanceId;       /* 0xFFFFFFFF when MIG is off */
	unsigned int computeInstanceId;   /* 0xFFFFFFFF when MIG is off */
} nvmlProcessInfo_v2_t;

typedef nvmlProcessInfo_v2_t nvmlProcessInfo_t;

/*
 * One sample of nvmlDeviceGetProcessUtilization: a process's share of the
 * GPU over the driver's last sample interval (about 1/6 s), in percent, and
 * the CPU time of the sample (µs since the epoch).
 */
typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp; /* µs */
	unsigned int smUtil;          /* SM (3D/compute) */
	unsigned int memUtil;         /* frame buffer */
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* nvmlTemperatureSensors_t */
typedef int nvmlTemperatureSensors_t;
#define NVML_TEMPERATURE_GPU 0

/* nvmlClockType_t: all in MHz. */
typedef int nvmlClockType_t;
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_CLOCK_VIDEO 3
#define NVML_CLOCK_COUNT 4

/* nvmlMemoryErrorType_t */
typedef int nvmlMemoryErrorType_t;
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1

/* nvmlEccCounterType_t */
typedef int nvmlEccCounterType_t;
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1

/* nvmlPcieUtilCounter_t: KB/s over a 20 ms sample. */
typedef int nvmlPcieUtilCounter_t;
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1

/* nvmlEnableState_t (MIG mode) */
#define NVML_FEATURE_DISABLED 0
#define NVML_FEATURE_ENABLED 1

/* Clock event (formerly "throttle") reasons: a bit mask. */
#define nvmlClocksEventReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x0000000000000002ULL
#define nvmlClocksEventReasonSwPowerCap 0x0000000000000004ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008ULL
#define nvmlClocksEventReasonSyncBoost 0x0000000000000010ULL
#define nvmlClocksEventReasonSwThermalSlowdown 0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080ULL
#define nvmlClocksEventReasonDisplayClockSetting 0x0000000000000100ULL

/* nvmlValueType_t and nvmlValue_t (8 bytes) */
typedef int nvmlValueType_t;
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define NVML_VALUE_TYPE_SIGNED_INT 5

typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
} nvmlValue_t;

/* nvmlFieldValue_t: 40 bytes. fieldId (and scopeId) in, the rest out. */
typedef struct nvmlFieldValue_st {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;   /* microseconds since 1970 */
	long long latencyUsec;
	nvmlValueType_t valueType;
	nvmlReturn_t nvmlReturn; /* value is valid only when NVML_SUCCESS */
	nvmlValue_t value;
} nvmlFieldValue_t;

/* Field identifiers (NVML_FI_*) used here. */
#define NVML_FI_DEV_RETIRED_SBE 29
#define NVML_FI_DEV_RETIRED_DBE 30
#define NVML_FI_DEV_RETIRED_PENDING 31
#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94

/* Events: only XIDs are used. */
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL

/* nvmlEventData_t: 32 bytes (24 for the v1 nvmlEventSetWait, which does not fill the instance ids). */
typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData; /* the XID for nvmlEventTypeXidCriticalError (999: unknown) */
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

/* The function types, one per symbol resolved (same for the versioned variants noted). */
typedef nvmlReturn_t (*nvml_init_fn)(void);                 /* nvmlInit_v2, nvmlInit, nvmlShutdown */
typedef const char *(*nvml_error_string_fn)(nvmlReturn_t);  /* nvmlErrorString */
typedef nvmlReturn_t (*nvml_sys_string_fn)(char *, unsigned int); /* nvmlSystemGetDriverVersion, ...NVMLVersion */
typedef nvmlReturn_t (*nvml_sys_int_fn)(int *);             /* nvmlSystemGetCudaDriverVersion(_v2) */
typedef nvmlReturn_t (*nvml_count_fn)(unsigned int *);      /* nvmlDeviceGetCount(_v2) */
typedef nvmlReturn_t (*nvml_handle_fn)(unsigned int, nvmlDevice_t *); /* nvmlDeviceGetHandleByIndex(_v2) */
typedef nvmlReturn_t (*nvml_dev_string_fn)(nvmlDevice_t, char *, unsigned int); /* Name, UUID, Serial */
typedef nvmlReturn_t (*nvml_pci_fn)(nvmlDevice_t, nvmlPciInfo_t *);     /* nvmlDeviceGetPciInfo_v3/_v2 */
typedef nvmlReturn_t (*nvml_util_fn)(nvmlDevice_t, nvmlUtilization_t *); /* nvmlDeviceGetUtilizationRates */
typedef nvmlReturn_t (*nvml_codec_fn)(nvmlDevice_t, unsigned int *, unsigned int *); /* Encoder/DecoderUtilization */
typedef nvmlReturn_t (*nvml_mem_fn)(nvmlDevice_t, nvmlMemory_t *);       /* nvmlDeviceGetMemoryInfo */
typedef nvmlReturn_t (*nvml_mem2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);   /* nvmlDeviceGetMemoryInfo_v2 */
typedef nvmlReturn_t (*nvml_temp_fn)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *); /* GetTemperature */
typedef nvmlReturn_t (*nvml_fields_fn)(nvmlDevice_t, int, nvmlFieldValue_t *); /* nvmlDeviceGetFieldValues */
typedef nvmlReturn_t (*nvml_uint_fn)(nvmlDevice_t, unsigned int *);
/* ^ PowerUsage (mW), EnforcedPowerLimit / PowerManagementLimit (mW), FanSpeed (%), PcieReplayCounter */
typedef nvmlReturn_t (*nvml_ull_fn)(nvmlDevice_t, unsigned long long *);
/* ^ TotalEnergyConsumption (mJ), CurrentClocksEventReasons / CurrentClocksThrottleReasons (mask) */
typedef nvmlReturn_t (*nvml_clock_fn)(nvmlDevice_t, nvmlClockType_t, unsigned int *); /* nvmlDeviceGetClockInfo */
typedef nvmlReturn_t (*nvml_ecc_fn)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
				    unsigned long long *); /* nvmlDeviceGetTotalEccErrors */
typedef nvmlReturn_t (*nvml_pcie_fn)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int *); /* GetPcieThroughput */
typedef nvmlReturn_t (*nvml_procs_fn)(nvmlDevice_t, unsigned int *, void *);
/* ^ nvmlDeviceGetComputeRunningProcesses_v3/_v2 (nvmlProcessInfo_v2_t[]) and v1 (nvmlProcessInfo_v1_t[]) */
typedef nvmlReturn_t (*nvml_putil_fn)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
				      unsigned long long); /* nvmlDeviceGetProcessUtilization */
typedef nvmlReturn_t (*nvml_remap_fn)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *,
				      unsigned int *); /* nvmlDeviceGetRemappedRows */
typedef nvmlReturn_t (*nvml_mig_mode_fn)(nvmlDevice_t, unsigned int *, unsigned int *); /* nvmlDeviceGetMigMode */
typedef nvmlReturn_t (*nvml_mig_handle_fn)(nvmlDevice_t, unsigned int, nvmlDevice_t *);
/* ^ nvmlDeviceGetMigDeviceHandleByIndex */
typedef nvmlReturn_t (*nvml_event_create_fn)(nvmlEventSet_t *); /* nvmlEventSetCreate */
typedef nvmlReturn_t (*nvml_event_free_fn)(nvmlEventSet_t);     /* nvmlEventSetFree */
typedef nvmlReturn_t (*nvml_register_fn)(nvmlDevice_t, unsigned long long, nvmlEventSet_t); /* RegisterEvents */
typedef nvmlReturn_t (*nvml_event_wait_fn)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
/* ^ nvmlEventSetWait_v2 / nvmlEventSetWait (timeout in ms) */

/* events, NVLink */

/* Event types (nvmlEventType*) besides XIDs; nvmlDeviceGetSupportedEventTypes says which a GPU has. */
#define nvmlEventTypeSingleBitEccError 0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002ULL
#define nvmlEventTypePState 0x0000000000000004ULL
#define nvmlEventTypeClock 0x0000000000000010ULL
#define nvmlEventTypeGpuUnavailableError 0x0000000000004000ULL /* R560 and later */

/* NVLink: links per GPU at most, link state (nvmlEnableState_t), error counters (nvmlNvLinkErrorCounter_t). */
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_NVLINK_ERROR_DL_REPLAY 0
#define NVML_NVLINK_ERROR_DL_RECOVERY 1
#define NVML_NVLINK_ERROR_DL_CRC_FLIT 2
#define NVML_NVLINK_ERROR_DL_CRC_DATA 3
#define NVML_NVLINK_ERROR_DL_ECC_DATA 4

/* NVLink data counters through nvmlDeviceGetFieldValues, KiB since the driver loaded; scopeId is the link. */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139

typedef nvmlReturn_t (*nvml_nvlink_state_fn)(nvmlDevice_t, unsigned int, unsigned int *); /* nvmlDeviceGetNvLinkState */
typedef nvmlReturn_t (*nvml_nvlink_error_fn)(nvmlDevice_t, unsigned int, int, unsigned long long *);
/* ^ nvmlDeviceGetNvLinkErrorCounter(device, link, nvmlNvLinkErrorCounter_t, value) */
typedef nvmlReturn_t (*nvml_event_types_fn)(nvmlDevice_t, unsigned long long *); /* nvmlDeviceGetSupportedEventTypes */

/* MIG and GPM. Checked against the same NVML 12.2.140 header. */

/* MIG: ids NVML gives when a device or process is not in a MIG instance. */
#define NVML_INVALID_INSTANCE_ID 0xFFFFFFFFu

/* GPM (GPU performance monitoring, Hopper and newer): metric ids of nvmlGpmMetricId_t used here. */
#define NVML_GPM_METRIC_GRAPHICS_UTIL 1       /* percent of time any graphics/compute engine was active */
#define NVML_GPM_METRIC_SM_UTIL 2             /* percent of SMs busy */
#define NVML_GPM_METRIC_SM_OCCUPANCY 3        /* percent of warps active vs the theoretical maximum */
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5     /* percent of time any tensor pipe was active */
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10       /* percent of DRAM bandwidth used vs the maximum */
#define NVML_GPM_METRIC_FP64_UTIL 11          /* percent, non-tensor FP64 */
#define NVML_GPM_METRIC_FP32_UTIL 12          /* percent, non-tensor FP32 */
#define NVML_GPM_METRIC_FP16_UTIL 13          /* percent, non-tensor FP16 */
#define NVML_GPM_METRIC_PCIE_TX_PER_SEC 20    /* MiB/s */
#define NVML_GPM_METRIC_PCIE_RX_PER_SEC 21    /* MiB/s */
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60 /* MiB/s */
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61 /* MiB/s */
#define NVML_GPM_METRIC_MAX 98

#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1

typedef struct nvmlGpmSample_st *nvmlGpmSample_t; /* opaque, from nvmlGpmSampleAlloc */

/* nvmlGpmMetric_t: 40 bytes. metricId in; nvmlReturn, value and metricInfo out. */
typedef struct nvmlGpmMetric_st {
	unsigned int metricId;
	nvmlReturn_t nvmlReturn; /* value is valid only when NVML_SUCCESS */
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;
} nvmlGpmMetric_t;

/* nvmlGpmMetricsGet_t: 3944 bytes. The metrics between sample1 and sample2 (taken > 100 ms apart). */
typedef struct nvmlGpmMetricsGet_st {
	unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
	unsigned int numMetrics; /* entries of metrics[] filled in */
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

/* nvmlGpmSupport_t: 8 bytes. */
typedef struct nvmlGpmSupport_st {
	unsigned int version;           /* NVML_GPM_SUPPORT_VERSION */
	unsigned int isSupportedDevice; /* out: nonzero when the GPU supports GPM */
} nvmlGpmSupport_t;

typedef nvmlReturn_t (*nvml_gpm_support_fn)(nvmlDevice_t, nvmlGpmSupport_t *); /* nvmlGpmQueryDeviceSupport */
typedef nvmlReturn_t (*nvml_gpm_alloc_fn)(nvmlGpmSample_t *);                 /* nvmlGpmSampleAlloc */
typedef nvmlReturn_t (*nvml_gpm_free_fn)(nvmlGpmSample_t);                    /* nvmlGpmSampleFree */
typedef nvmlReturn_t (*nvml_gpm_get_fn)(nvmlDevice_t, nvmlGpmSample_t);       /* nvmlGpmSampleGet */
typedef nvmlReturn_t (*nvml_gpm_mig_get_fn)(nvmlDevice_t, unsigned int, nvmlGpmSample_t);
/* ^ nvmlGpmMigSampleGet(parent GPU, GPU instance id, sample) */
typedef nvmlReturn_t (*nvml_gpm_metrics_fn)(nvmlGpmMetricsGet_t *);          /* nvmlGpmMetricsGet */

#endif
