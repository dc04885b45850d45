#include <opus/opus.h>

/* opus_encoder_ctl is variadic, which Swift cannot call. */
static inline int padgate_opus_set_bitrate(OpusEncoder *encoder, opus_int32 bitrate) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
}
