#include <opus/opus.h>

/* opus_encoder_ctl is variadic, which Swift cannot call. */
static inline int padgate_opus_set_bitrate(OpusEncoder *encoder, opus_int32 bitrate) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
}

static inline int padgate_opus_set_complexity(OpusEncoder *encoder, opus_int32 complexity) {
    return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
}

static inline int padgate_opus_set_vbr(OpusEncoder *encoder, opus_int32 vbr) {
    return opus_encoder_ctl(encoder, OPUS_SET_VBR(vbr));
}
