/* SPDX-License-Identifier: MIT */
/*
 * The hand-declared NVML ABI (monitor/nvidia/nvml.h) against NVIDIA's published
 * header. The expected numbers below were written down from nvml.h of NVML
 * 12.2.140 (NVML_API_VERSION 12, cuda-nvml-dev-12.2.140; the copy vendored
 * in github.com/NVIDIA/go-nvml, pkg/nvml/nvml.h), for LP64 Linux: struct
 * sizes and field offsets as the C compiler lays out NVIDIA's declarations,
 * enum and #define values as NVIDIA gives them. A mismatch here means the
 * collector would read the wrong bytes from a real driver.
 */
#include "../../monitor/nvidia/nvml.h"
#include "tap.h"

#include <stddef.h>

/* NVML 12.2.140, x86_64/aarch64 Linux. */
static const struct {
	const char *what;
	long long got, want;
} checks[] = {
#define SZ(t, n) { "sizeof(" #t ")", (long long)sizeof(t), n }
#define OFF(t, f, n) { "offsetof(" #t ", " #f ")", (long long)offsetof(t, f), n }
#define VAL(c, n) { #c, (long long)(c), n }
	/* structs */
	SZ(nvmlPciInfo_t, 68),
	OFF(nvmlPciInfo_t, busIdLegacy, 0),
	OFF(nvmlPciInfo_t, domain, 16),
	OFF(nvmlPciInfo_t, bus, 20),
	OFF(nvmlPciInfo_t, device, 24),
	OFF(nvmlPciInfo_t, pciDeviceId, 28),
	OFF(nvmlPciInfo_t, pciSubSystemId, 32),
	OFF(nvmlPciInfo_t, busId, 36),
	SZ(nvmlUtilization_t, 8),
	OFF(nvmlUtilization_t, memory, 4),
	SZ(nvmlMemory_t, 24),
	OFF(nvmlMemory_t, total, 0),
	OFF(nvmlMemory_t, free, 8),
	OFF(nvmlMemory_t, used, 16),
	SZ(nvmlMemory_v2_t, 40),
	OFF(nvmlMemory_v2_t, version, 0),
	OFF(nvmlMemory_v2_t, total, 8),
	OFF(nvmlMemory_v2_t, reserved, 16),
	OFF(nvmlMemory_v2_t, free, 24),
	OFF(nvmlMemory_v2_t, used, 32),
	VAL(nvmlMemory_v2, 0x02000028),
	SZ(nvmlProcessInfo_v1_t, 16),
	OFF(nvmlProcessInfo_v1_t, usedGpuMemory, 8),
	SZ(nvmlProcessInfo_v2_t, 24),
	SZ(nvmlProcessInfo_t, 24),
	OFF(nvmlProcessInfo_v2_t, usedGpuMemory, 8),
	OFF(nvmlProcessInfo_v2_t, gpuInstanceId, 16),
	OFF(nvmlProcessInfo_v2_t, computeInstanceId, 20),
	SZ(nvmlProcessUtilizationSample_t, 32),
	OFF(nvmlProcessUtilizationSample_t, timeStamp, 8),
	OFF(nvmlProcessUtilizationSample_t, smUtil, 16),
	OFF(nvmlProcessUtilizationSample_t, memUtil, 20),
	OFF(nvmlProcessUtilizationSample_t, encUtil, 24),
	OFF(nvmlProcessUtilizationSample_t, decUtil, 28),
	SZ(nvmlValue_t, 8),
	SZ(nvmlFieldValue_t, 40),
	OFF(nvmlFieldValue_t, scopeId, 4),
	OFF(nvmlFieldValue_t, timestamp, 8),
	OFF(nvmlFieldValue_t, latencyUsec, 16),
	OFF(nvmlFieldValue_t, valueType, 24),
	OFF(nvmlFieldValue_t, nvmlReturn, 28),
	OFF(nvmlFieldValue_t, value, 32),
	SZ(nvmlEventData_t, 32),
	OFF(nvmlEventData_t, eventType, 8),
	OFF(nvmlEventData_t, eventData, 16),
	OFF(nvmlEventData_t, gpuInstanceId, 24),
	OFF(nvmlEventData_t, computeInstanceId, 28),
	SZ(nvmlReturn_t, 4),
	SZ(nvmlDevice_t, 8),
	/* return codes (nvmlReturn_t) */
	VAL(NVML_SUCCESS, 0),
	VAL(NVML_ERROR_UNINITIALIZED, 1),
	VAL(NVML_ERROR_INVALID_ARGUMENT, 2),
	VAL(NVML_ERROR_NOT_SUPPORTED, 3),
	VAL(NVML_ERROR_NO_PERMISSION, 4),
	VAL(NVML_ERROR_NOT_FOUND, 6),
	VAL(NVML_ERROR_INSUFFICIENT_SIZE, 7),
	VAL(NVML_ERROR_DRIVER_NOT_LOADED, 9),
	VAL(NVML_ERROR_TIMEOUT, 10),
	VAL(NVML_ERROR_LIBRARY_NOT_FOUND, 12),
	VAL(NVML_ERROR_FUNCTION_NOT_FOUND, 13),
	VAL(NVML_ERROR_GPU_IS_LOST, 15),
	VAL(NVML_ERROR_RESET_REQUIRED, 16),
	VAL(NVML_ERROR_NO_DATA, 21),
	VAL(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, 25),
	VAL(NVML_ERROR_UNKNOWN, 999),
	/* enums */
	VAL(NVML_TEMPERATURE_GPU, 0),
	VAL(NVML_CLOCK_GRAPHICS, 0),
	VAL(NVML_CLOCK_SM, 1),
	VAL(NVML_CLOCK_MEM, 2),
	VAL(NVML_CLOCK_VIDEO, 3),
	VAL(NVML_MEMORY_ERROR_TYPE_CORRECTED, 0),
	VAL(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, 1),
	VAL(NVML_VOLATILE_ECC, 0),
	VAL(NVML_AGGREGATE_ECC, 1),
	VAL(NVML_PCIE_UTIL_TX_BYTES, 0),
	VAL(NVML_PCIE_UTIL_RX_BYTES, 1),
	VAL(NVML_FEATURE_DISABLED, 0),
	VAL(NVML_FEATURE_ENABLED, 1),
	VAL(NVML_VALUE_TYPE_DOUBLE, 0),
	VAL(NVML_VALUE_TYPE_UNSIGNED_INT, 1),
	VAL(NVML_VALUE_TYPE_UNSIGNED_LONG, 2),
	VAL(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG, 3),
	VAL(NVML_VALUE_TYPE_SIGNED_LONG_LONG, 4),
	VAL(NVML_VALUE_TYPE_SIGNED_INT, 5),
	/* field ids */
	VAL(NVML_FI_DEV_RETIRED_SBE, 29),
	VAL(NVML_FI_DEV_RETIRED_DBE, 30),
	VAL(NVML_FI_DEV_RETIRED_PENDING, 31),
	VAL(NVML_FI_DEV_MEMORY_TEMP, 82),
	VAL(NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, 83),
	VAL(NVML_FI_DEV_PCIE_REPLAY_COUNTER, 94),
	/* bit masks */
	VAL(nvmlClocksEventReasonGpuIdle, 0x1),
	VAL(nvmlClocksEventReasonApplicationsClocksSetting, 0x2),
	VAL(nvmlClocksEventReasonSwPowerCap, 0x4),
	VAL(nvmlClocksThrottleReasonHwSlowdown, 0x8),
	VAL(nvmlClocksEventReasonSyncBoost, 0x10),
	VAL(nvmlClocksEventReasonSwThermalSlowdown, 0x20),
	VAL(nvmlClocksThrottleReasonHwThermalSlowdown, 0x40),
	VAL(nvmlClocksThrottleReasonHwPowerBrakeSlowdown, 0x80),
	VAL(nvmlClocksEventReasonDisplayClockSetting, 0x100),
	VAL(nvmlEventTypeXidCriticalError, 0x8),
	/* events and NVLink; nvmlEventTypeGpuUnavailableError is R560's (0x4000), after 12.2.140 */
	VAL(nvmlEventTypeSingleBitEccError, 0x1),
	VAL(nvmlEventTypeDoubleBitEccError, 0x2),
	VAL(nvmlEventTypePState, 0x4),
	VAL(nvmlEventTypeClock, 0x10),
	VAL(nvmlEventTypeGpuUnavailableError, 0x4000),
	VAL(NVML_NVLINK_MAX_LINKS, 18),
	VAL(NVML_NVLINK_ERROR_DL_REPLAY, 0),
	VAL(NVML_NVLINK_ERROR_DL_RECOVERY, 1),
	VAL(NVML_NVLINK_ERROR_DL_CRC_FLIT, 2),
	VAL(NVML_NVLINK_ERROR_DL_CRC_DATA, 3),
	VAL(NVML_NVLINK_ERROR_DL_ECC_DATA, 4),
	VAL(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 138),
	VAL(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 139),
	/* buffer sizes */
	VAL(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE, 32),
	VAL(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE, 16),
	VAL(NVML_DEVICE_UUID_V2_BUFFER_SIZE, 96),
	VAL(NVML_DEVICE_NAME_V2_BUFFER_SIZE, 96),
	VAL(NVML_DEVICE_SERIAL_BUFFER_SIZE, 30),
	VAL(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, 80),
	VAL(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE, 80),
	VAL(NVML_VALUE_NOT_AVAILABLE, -1),
	/* GPM: nvmlGpmMetric_t, nvmlGpmMetricsGet_t, nvmlGpmSupport_t and the metric ids used */
	SZ(nvmlGpmMetric_t, 40),
	OFF(nvmlGpmMetric_t, nvmlReturn, 4),
	OFF(nvmlGpmMetric_t, value, 8),
	OFF(nvmlGpmMetric_t, metricInfo, 16),
	SZ(nvmlGpmMetricsGet_t, 3944),
	OFF(nvmlGpmMetricsGet_t, numMetrics, 4),
	OFF(nvmlGpmMetricsGet_t, sample1, 8),
	OFF(nvmlGpmMetricsGet_t, sample2, 16),
	OFF(nvmlGpmMetricsGet_t, metrics, 24),
	SZ(nvmlGpmSupport_t, 8),
	OFF(nvmlGpmSupport_t, isSupportedDevice, 4),
	VAL(NVML_GPM_METRICS_GET_VERSION, 1),
	VAL(NVML_GPM_SUPPORT_VERSION, 1),
	VAL(NVML_GPM_METRIC_MAX, 98),
	VAL(NVML_GPM_METRIC_GRAPHICS_UTIL, 1),
	VAL(NVML_GPM_METRIC_SM_UTIL, 2),
	VAL(NVML_GPM_METRIC_SM_OCCUPANCY, 3),
	VAL(NVML_GPM_METRIC_ANY_TENSOR_UTIL, 5),
	VAL(NVML_GPM_METRIC_DRAM_BW_UTIL, 10),
	VAL(NVML_GPM_METRIC_FP64_UTIL, 11),
	VAL(NVML_GPM_METRIC_FP32_UTIL, 12),
	VAL(NVML_GPM_METRIC_FP16_UTIL, 13),
	VAL(NVML_GPM_METRIC_PCIE_TX_PER_SEC, 20),
	VAL(NVML_GPM_METRIC_PCIE_RX_PER_SEC, 21),
	VAL(NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, 60),
	VAL(NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, 61),
	VAL(NVML_INVALID_INSTANCE_ID, 0xFFFFFFFF),
#undef SZ
#undef OFF
#undef VAL
};

int main(void)
{
	char name[160];

	printf("# against %s\n", NVML_HEADER_CHECKED);
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		snprintf(name, sizeof(name), "%s == %lld", checks[i].what, checks[i].want);
		is_int(checks[i].got, checks[i].want, name);
	}
	is_int((long long)NVML_VALUE_NOT_AVAILABLE_ULL == -1LL, 1, "usedGpuMemory's not-available value is (unsigned long long)-1");
	return done_testing();
}
